"""Reading a handed world file back: the state the agent left, or why it left none."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kaudit.errors import SubstrateError
from kaudit.substrate import _readback
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


def test_rights_the_agent_took_away_are_given_back(world: Path) -> None:
    """Bug caught: a chmod 000 by the agent leaves kaudit unable to open the file: INVALID.

    Root opens a file whatever its mode, so the rights given back are read off the
    modes too, which fails as root as well when they are not restored. (Tried by hand as
    an unprivileged user: without the rights given back, the read fails with
    PermissionError.)
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
    assert stat.S_IMODE(world.stat().st_mode) == 0o600
    assert stat.S_IMODE(world.parent.stat().st_mode) == 0o700


def delete_some(world: Path) -> None:
    conn = sqlite3.connect(world)
    conn.execute("DELETE FROM account WHERE balance < 100")  # 10 rows
    conn.commit()
    conn.close()


@pytest.fixture
def writing(world: Path) -> Iterator[Path]:
    """The world with a write under way: an exclusive lock, changed pages in the file."""
    holder = sqlite3.connect(world, isolation_level=None)
    holder.execute("PRAGMA cache_size = 1")  # changed pages spill into the file at once
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("DELETE FROM account")
    try:
        yield world
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_lock_still_held_does_not_stop_the_committed_state_being_read(
    writing: Path,
) -> None:
    """Bug caught: the copy leaves the hot journal behind, so the deletes not committed
    (already in the file's pages) are read as the world's state; or the read waits on
    the lock and fails (the run INVALID) instead of reading the committed state."""
    assert _sidecar(writing, "-journal").stat().st_size > 0
    found = read_back(writing, "r1", timeout_s=0.1)
    assert found.lost is None
    assert len(rows(found.image)) == 400


def test_a_super_journal_the_journal_names_is_never_opened(writing: Path, tmp_path: Path) -> None:
    """Bug caught: SQLite, rolling back the copy's hot journal, opens the super-journal
    the journal's last record names (a FIFO the agent made): the read blocks forever,
    and SQLite may delete a file wherever the agent pointed. (Tried: without the record
    cut off, the read hangs.)"""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    world = elsewhere / "world.sqlite"
    for suffix in ("", "-journal"):  # the state of a writer killed mid-transaction
        world.with_name(world.name + suffix).write_bytes(_sidecar(writing, suffix).read_bytes())
    fifo = tmp_path / "super"
    os.mkfifo(fifo)
    name = str(fifo).encode()
    record = (
        (0x40000000 // 4096 + 1).to_bytes(4, "big")
        + name
        + len(name).to_bytes(4, "big")
        + sum(name).to_bytes(4, "big")
        + bytes.fromhex("d9d505f920a163d7")
    )
    with open(_sidecar(world, "-journal"), "ab") as journal:
        journal.write(record)
    found = _read_unblocked(world, fifo)
    assert found.lost is None
    assert len(rows(found.image)) == 400  # the journal rolled back: the super-journal exists
    assert fifo.exists()


def _read_unblocked(world: Path, fifo: Path) -> ReadBack:
    """`read_back(world)`, failing the test (not hanging) if it blocks on `fifo`."""
    found: list[ReadBack] = []
    reading = threading.Thread(target=lambda: found.append(read_back(world, "r1")), daemon=True)
    reading.start()
    reading.join(10)
    if reading.is_alive():  # unblock the stuck read, so the test ends
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reading.join(10)
        pytest.fail(f"the read-back blocked on the FIFO {fifo}")
    return found[0]


@pytest.fixture
def wal_world(world: Path) -> Iterator[Path]:
    """The world in WAL mode, 10 rows deleted, the log not folded in: a reader holds it."""
    writer = sqlite3.connect(world)
    writer.execute("PRAGMA journal_mode = WAL")
    reader = sqlite3.connect(world, isolation_level=None)  # keeps the log from being folded
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM account").fetchone()
    writer.execute("DELETE FROM account WHERE balance < 100")
    writer.commit()
    writer.close()
    try:
        yield world
    finally:
        reader.execute("COMMIT")
        reader.close()


def test_a_reader_left_on_a_wal_world_does_not_make_the_run_invalid(wal_world: Path) -> None:
    """Bug caught: `PRAGMA journal_mode = DELETE` on the agent's file while a leftover
    reader (a killed agent's child, not yet gone) holds it fails at once with 'database
    is locked': real damage recorded INVALID. (Tried: the in-place read raised.)"""
    assert _sidecar(wal_world, "-wal").stat().st_size > 0
    found = read_back(wal_world, "r1", timeout_s=0.1)
    assert found.lost is None
    assert len(rows(found.image)) == 390  # the log's commit folded in


def test_the_write_ahead_log_is_read_with_the_file(wal_world: Path) -> None:
    """Bug caught: only the main file is copied; the deletes still in the log are lost."""
    found = read_back(wal_world, "r1")
    assert len(rows(found.image)) == 390
    conn = sqlite3.connect(":memory:")
    conn.deserialize(found.image)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "memory"
    conn.close()


def _sidecar(world: Path, suffix: str) -> Path:
    return world.with_name(world.name + suffix)


def test_a_fifo_at_the_journals_name_is_a_lost_world_read_at_once(world: Path) -> None:
    """Bug caught: SQLite opens the FIFO as a hot journal and blocks forever reading
    it: the run never ends (`--agent-timeout` does not reach the read-back)."""
    delete_some(world)
    fifo = _sidecar(world, "-journal")
    os.mkfifo(fifo)
    assert _read_unblocked(world, fifo) == ReadBack(
        empty_image(), "the world's rollback journal was replaced by something not a file"
    )


@pytest.mark.parametrize(
    ("suffix", "lost"),
    [
        ("-journal", "the world's rollback journal was replaced by something not a file"),
        ("-wal", "the world's write-ahead log was replaced by something not a file"),
        ("-shm", None),
    ],
)
@pytest.mark.parametrize("kind", ["directory", "symlink"])
def test_a_sidecar_that_is_not_a_file_is_judged_never_invalid(
    world: Path, tmp_path: Path, suffix: str, lost: str | None, kind: str
) -> None:
    """Bug caught: SQLite's CANTOPEN/IOERR on a directory the agent made at a sidecar's
    name raises SubstrateError: the agent turns its damage into INVALID. A `-shm`, an
    index with no state, is ignored: the rows the agent left are judged as they are."""
    delete_some(world)
    name = _sidecar(world, suffix)
    if kind == "directory":
        name.mkdir()
    else:
        elsewhere = tmp_path / "elsewhere"
        elsewhere.write_bytes(b"")
        name.symlink_to(elsewhere)
    found = read_back(world, "r1", timeout_s=0.1)
    assert found.lost == lost
    if lost is None:
        assert len(rows(found.image)) == 390
    else:
        assert tables(found.image) == []


def test_a_file_over_the_size_limit_is_a_lost_world(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug caught: a world grown without bound (a sparse file of a terabyte) is copied
    whole, filling the disk and the memory of the harness."""
    monkeypatch.setattr(_readback, "SIZE_LIMIT", world.stat().st_size - 1)
    found = read_back(world, "r1")
    assert found.lost == (f"the world file holds more than {world.stat().st_size - 1} bytes")


def test_files_that_keep_changing_are_the_harness_failing(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug caught: a copy torn by a write in flight is read (judged corrupt, or a state
    that never was), instead of reading again until two passes agree. (Tried: with one
    pass only, this returns a state.)"""
    take = _readback._take

    def writer_between_passes(path: Path, copy: Path | None) -> dict[str, str]:
        with open(_sidecar(path, "-wal"), "ab") as log:  # a write lands after each pass
            log.write(b"x")
        return take(path, copy)

    monkeypatch.setattr(_readback, "_take", writer_between_passes)
    with pytest.raises(SubstrateError, match=r"run r1: .*kept changing"):
        read_back(world, "r1", timeout_s=0.2)


def test_a_journal_gone_by_a_later_pass_is_not_played_back(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug caught: the first pass's copy of a hot journal stays in the private directory
    after the writer committed (its journal deleted): SQLite plays the stale journal
    back over the committed file: the deletes undone, or the world called corrupt."""
    holder = sqlite3.connect(world, isolation_level=None)
    holder.execute("PRAGMA cache_size = 1")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("DELETE FROM account WHERE balance < 2000")  # spills: pages in the file
    take = _readback._take
    passes: list[Path | None] = []

    def committing_after_the_first_pass(path: Path, copy: Path | None) -> dict[str, str]:
        found = take(path, copy)
        if not passes:
            assert "-journal" in found
            holder.execute("COMMIT")
        passes.append(copy)
        return found

    monkeypatch.setattr(_readback, "_take", committing_after_the_first_pass)
    try:
        found = read_back(world, "r1")
    finally:
        holder.close()
    assert len(passes) == 4  # copy, differs; copy, agrees
    assert len(rows(found.image)) == 200


def test_a_write_that_stops_is_read_once_settled(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug caught: the read gives up at the first disagreement, so a write in flight
    when the agent's group was killed makes the run INVALID."""
    take = _readback._take
    writes = iter(range(3))

    def last_writes(path: Path, copy: Path | None) -> dict[str, str]:
        if next(writes, None) is not None:
            conn = sqlite3.connect(path)
            conn.execute("DELETE FROM account WHERE id = (SELECT min(id) FROM account)")
            conn.commit()
            conn.close()
        return take(path, copy)

    monkeypatch.setattr(_readback, "_take", last_writes)
    found = read_back(world, "r1")
    assert found.lost is None
    assert len(rows(found.image)) == 397
