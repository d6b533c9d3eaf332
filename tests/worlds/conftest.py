"""The enterprise world, built once per session; each test seeds its own sandbox."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kaudit.substrate import SqliteSandbox, SqliteSubstrate
from kaudit.worlds import PythonWorld, get_world


@pytest.fixture(scope="session")
def world() -> PythonWorld:
    return get_world("enterprise")


@pytest.fixture(scope="session")
def substrate(world: PythonWorld) -> SqliteSubstrate:
    return world.substrate()


@pytest.fixture
def sandbox(substrate: SqliteSubstrate) -> Iterator[SqliteSandbox]:
    box = substrate.seed("test")
    yield box
    box.close()
