"""Reading a handed world file back: the state the agent left, or why it left none."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from kaudit.errors import SubstrateError
from kaudit.substrate._readback import ReadBack, empty_image, read_back

SCHEMA = (
    "CREATE TABLE account (id TEXT PRIMARY KEY, balance INTEGER CHECK (balance >= 0));"
    "CREATE INDEX account_balance ON account (balance);"
)


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """A world file of 400 rows (several pages, an index) in a private directory."""
    directory = tmp_path / "run"
    directory.mkdir(mode=0o700)
    path = directory / "world.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.executemany(
        "INSERT INTO account VALUES (?, ?)", [(f"ACC_{i:04}", i * 10) for i in range(400)]
    )
    conn.commit()
    conn.close()
    return path


def rows(image: bytes) -> list[tuple[str, int]]:
    conn = sqlite3.connect(":memory:")
    conn.deserialize(image)
    try:
        return conn.execute("SELECT id, balance FROM account ORDER BY id").fetchall()
    finally:
        conn.close()


def tables(image: bytes) -> list[str]:
    conn = sqlite3.connect(":memory:")
    conn.deserialize(image)
    try:
        return [name for (name,) in conn.execute("SELECT name FROM sqlite_master")]
    finally:
        conn.close()


def test_an_untouched_world_reads_back_whole(world: Path) -> None:
    """Bug caught: the integrity check or the read calls a sound file destroyed."""
    found = read_back(world, "r1")
    assert found.lost is None
    assert len(rows(found.image)) == 400


def test_garbage_over_the_file_is_a_lost_world(world: Path) -> None:
    """Bug caught: bytes that are not SQLite raise, and the run is INVALID (never counted)."""
    with open(world, "r+b") as handle:
        handle.write(b"x" * 4096)
    found = read_back(world, "r1")
    assert found == ReadBack(
        empty_image(), "the world file is not a readable database: file is not a database"
    )
    assert tables(found.image) == []


def test_a_truncated_file_is_a_lost_world(world: Path) -> None:
    """Bug caught: a file cut in half raises SQLITE_CORRUPT out of the read: no verdict."""
    os.truncate(world, world.stat().st_size // 2)
    found = read_back(world, "r1")
    assert found.lost == (
        "the world file is not a readable database: database disk image is malformed"
    )
    assert tables(found.image) == []


def test_a_corrupted_page_inside_is_a_lost_world(world: Path) -> None:
    """Bug caught: a file whose header still reads is trusted, and the diff joins a broken tree."""
    size = world.stat().st_size
    page = 4096
    with open(world, "r+b") as handle:
        handle.seek((size // page - 1) * page)  # the last page: a leaf of a tree, not page 1
        handle.write(b"\xff" * page)
    found = read_back(world, "r1")
    assert found.lost is not None
    assert found.lost.startswith("the world file is corrupt: ")
    assert tables(found.image) == []


def test_a_deleted_file_is_a_lost_world(world: Path) -> None:
    """Bug caught: a missing file raises FileNotFoundError out of the take-back."""
    world.unlink()
    assert read_back(world, "r1") == ReadBack(empty_image(), "the world file was deleted")


@pytest.mark.parametrize("kind", ["directory", "symlink"])
def test_something_not_a_file_at_the_path_is_a_lost_world(
    world: Path, tmp_path: Path, kind: str
) -> None:
    """Bug caught: a symbolic link to another database is read as the world."""
    elsewhere = tmp_path / "other.sqlite"
    world.rename(elsewhere)
    if kind == "directory":
        world.mkdir()
    else:
        world.symlink_to(elsewhere)
    assert read_back(world, "r1").lost == "the world file was replaced by something not a file"


def test_an_empty_file_is_an_empty_database_not_a_lost_one(world: Path) -> None:
    """Bug caught: a zero-byte file (a valid empty database) raises 'unable to serialize'."""
    world.write_bytes(b"")
    found = read_back(world, "r1")
    assert found.lost is None  # readable: the diff sees every table dropped
    assert tables(found.image) == []


def test_a_row_breaking_a_check_constraint_is_a_row_not_corruption(world: Path) -> None:
    """Bug caught: the integrity check's value findings make a readable world a lost one."""
    conn = sqlite3.connect(world)
    conn.execute("PRAGMA ignore_check_constraints = ON")
    conn.execute("UPDATE account SET balance = -5 WHERE id = 'ACC_0007'")
    conn.commit()
    conn.close()
    found = read_back(world, "r1")
    assert found.lost is None
    assert ("ACC_0007", -5) in rows(found.image)


@pytest.mark.skipif(os.geteuid() == 0, reason="root opens a file whatever its mode")
def test_rights_the_agent_took_away_are_given_back(world: Path) -> None:
    """Bug caught: a chmod 000 by the agent leaves kaudit unable to open the file: INVALID.

    (Tried by hand as an unprivileged user: without the rights given back, the read
    fails with PermissionError.)
    """
    conn = sqlite3.connect(world)
    conn.execute("DELETE FROM account WHERE id = 'ACC_0001'")
    conn.commit()
    conn.close()
    os.chmod(world, 0)
    os.chmod(world.parent, 0)
    found = read_back(world, "r1")
    assert found.lost is None
    assert len(rows(found.image)) == 399


@pytest.fixture
def locked(world: Path) -> Iterator[Path]:
    """The world with an exclusive lock held by another connection."""
    holder = sqlite3.connect(world, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        yield world
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_lock_still_held_is_the_harness_failing_not_a_lost_world(locked: Path) -> None:
    """Bug caught: a file busy for a moment is judged destroyed: every row counted as damage."""
    with pytest.raises(SubstrateError, match=r"run r1: the world file cannot be read: .*locked"):
        read_back(locked, "r1", timeout_s=0.1)
