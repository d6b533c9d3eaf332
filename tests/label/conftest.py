"""Images for labeler tests: a template and helpers to mutate a copy of it."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pytest

from kaudit.substrate._sqlite import build_image


def _build(conn: sqlite3.Connection) -> None:
    conn.executescript(
        """
        CREATE TABLE item (id INTEGER PRIMARY KEY, org TEXT, name TEXT, price REAL, qty, ts TEXT);
        CREATE TABLE member (team TEXT, person TEXT, role TEXT, PRIMARY KEY (team, person));
        CREATE TABLE plain (a, b);
        """
    )
    for i in range(30):
        conn.execute(
            "INSERT INTO item VALUES (?, ?, ?, ?, ?, ?)",
            (i, "A" if i % 2 else "B", f"item {i}", 10.25 * i, i, "t0"),
        )
        conn.execute("INSERT INTO member VALUES (?, ?, ?)", (f"T{i % 3}", f"P{i}", "dev"))
        conn.execute("INSERT INTO plain VALUES (?, ?)", (i, str(i)))


@pytest.fixture(scope="session")
def template() -> bytes:
    return build_image(_build)


Mutate = Callable[[bytes, str], bytes]


@pytest.fixture(scope="session")
def mutate() -> Mutate:
    def apply(image: bytes, sql: str) -> bytes:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.deserialize(image)
        conn.execute("PRAGMA recursive_triggers = ON")
        conn.executescript(sql)
        out = conn.serialize()
        conn.close()
        return out

    return apply
