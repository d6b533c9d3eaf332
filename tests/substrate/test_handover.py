"""A SQLite sandbox handed to foreign code as a file, and taken back before its dump."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kaudit.label.diff import diff_images
from kaudit.substrate import HandableSandbox
from kaudit.substrate._handover import (
    LOCK_NAME,
    UNLOCKED_GRACE_S,
    prune_run_directories,
    run_directory,
)
from kaudit.substrate._sqlite import SqliteSandbox
from kaudit.tools import ToolContext
from kaudit.worlds._world import get_world


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "runs"
    monkeypatch.setenv("KAUDIT_RUNS", str(root))
    return root


def seeded(run_id: str = "r1") -> SqliteSandbox:
    sandbox = get_world("mini").substrate().seed(run_id)
    assert isinstance(sandbox, HandableSandbox)
    return sandbox


def test_foreign_writes_to_the_file_are_the_dumped_state(runs: Path) -> None:
    """Bug caught: the dump reads the in-memory copy the agent never touched."""
    sandbox = seeded()
    with run_directory() as directory:
        handed = sandbox.hand_over(directory)
        assert handed.db_path == directory / "world.sqlite"
        assert handed.url == f"sqlite:///{directory}/world.sqlite"
        foreign = sqlite3.connect(handed.db_path)
        foreign.execute("UPDATE account SET status = 'closed' WHERE id = 'ACC_001'")
        foreign.commit()
        foreign.close()
        sandbox.take_back()
    final = sandbox.dump()
    changes = diff_images(sandbox.initial.image, final.image, fast=False)
    assert [(c.table, c.op, c.key) for c in changes] == [
        ("account", "modified", (("id", "ACC_001"),))
    ]
    final.release()
    sandbox.close()
    assert not directory.exists()


def test_kaudit_tools_and_foreign_code_act_on_the_same_file(runs: Path) -> None:
    """Bug caught: tools keep writing the in-memory copy while the agent writes the file."""
    sandbox = seeded()
    with run_directory() as directory:
        handed = sandbox.hand_over(directory)
        tool = get_world("mini").substrate().tools["delete_account"]
        tool.call(ToolContext(db=sandbox.db), {"account_id": "ACC_002"})
        foreign = sqlite3.connect(handed.db_path)
        assert foreign.execute("SELECT count(*) FROM account WHERE id = 'ACC_002'").fetchone() == (
            0,
        )
        foreign.close()
        sandbox.take_back()
    final = sandbox.dump()
    changes = diff_images(sandbox.initial.image, final.image, fast=False)
    assert [(c.table, c.op) for c in changes] == [("account", "removed")]
    final.release()
    sandbox.close()


def test_a_write_ahead_log_left_behind_is_folded_into_the_dump(runs: Path) -> None:
    """Bug caught: a WAL-mode file is read without its log (the write is lost) or fails to load."""
    sandbox = seeded()
    with run_directory() as directory:
        handed = sandbox.hand_over(directory)
        assert handed.db_path is not None
        script = (
            "import sqlite3, sys, os\n"
            "c = sqlite3.connect(sys.argv[1])\n"
            "c.execute('PRAGMA journal_mode = WAL')\n"
            "c.execute(\"DELETE FROM link WHERE account_id = 'ACC_003'\")\n"
            "c.commit()\n"
            "os._exit(0)\n"  # no close: the log stays beside the file
        )
        subprocess.run([sys.executable, "-c", script, str(handed.db_path)], check=True)
        assert Path(f"{handed.db_path}-wal").exists()
        sandbox.take_back()
    final = sandbox.dump()
    changes = diff_images(sandbox.initial.image, final.image, fast=False)
    assert [(c.table, c.op, c.key) for c in changes] == [
        ("link", "removed", (("account_id", "ACC_003"), ("tag", "tier")))
    ]
    final.release()
    sandbox.close()


def test_a_transaction_left_open_by_a_killed_writer_is_rolled_back(runs: Path) -> None:
    """Bug caught: an uncommitted write of a killed agent counts as its final state."""
    sandbox = seeded()
    with run_directory() as directory:
        handed = sandbox.hand_over(directory)
        script = (
            "import sqlite3, sys, os\n"
            "c = sqlite3.connect(sys.argv[1])\n"
            "c.execute(\"DELETE FROM account WHERE id = 'ACC_004'\")\n"
            "os._exit(0)\n"  # exits inside the transaction, as a SIGKILL would
        )
        subprocess.run([sys.executable, "-c", script, str(handed.db_path)], check=True)
        sandbox.take_back()
    final = sandbox.dump()
    assert diff_images(sandbox.initial.image, final.image, fast=False) == []
    final.release()
    sandbox.close()


def test_a_deleted_world_file_comes_back_lost_and_empty(runs: Path) -> None:
    """Bug caught: kaudit's own handle still reads the unlinked file: judged untouched."""
    sandbox = seeded()
    with run_directory() as directory:
        handed = sandbox.hand_over(directory)
        assert handed.db_path is not None
        handed.db_path.unlink()
        lost = sandbox.take_back()
    assert lost == "the world file was deleted"
    final = sandbox.dump()
    changes = diff_images(sandbox.initial.image, final.image, fast=False)
    assert {c.op for c in changes} == {"schema", "removed"}
    assert {c.table for c in changes if c.op == "schema"} == {"account", "link", "outbox"}
    final.release()
    sandbox.close()


def test_a_replaced_world_file_is_read_at_its_path(runs: Path) -> None:
    """Bug caught: the take-back reads the file the agent replaced, not the one now there."""
    sandbox = seeded()
    with run_directory() as directory:
        handed = sandbox.hand_over(directory)
        assert handed.db_path is not None
        copy = directory / "copy.sqlite"
        foreign = sqlite3.connect(copy)
        sqlite3.connect(handed.db_path).backup(foreign)
        foreign.execute("DELETE FROM account WHERE id = 'ACC_001'")
        foreign.commit()
        foreign.close()
        os.replace(copy, handed.db_path)
        assert sandbox.take_back() is None
    final = sandbox.dump()
    changes = diff_images(sandbox.initial.image, final.image, fast=False)
    assert [(c.table, c.op, c.key) for c in changes] == [
        ("account", "removed", (("id", "ACC_001"),))
    ]
    final.release()
    sandbox.close()


def test_a_directory_whose_process_died_is_pruned_and_a_live_one_kept(runs: Path) -> None:
    """Bug caught: a killed kaudit leaves world files forever, or a live run's file is removed."""
    holder = (
        "import sys, time\n"
        "from kaudit.substrate._handover import run_directory\n"
        "with run_directory() as d:\n"
        "    print(d, flush=True)\n"
        "    time.sleep(600)\n"
    )
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    live = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, env=env)
    dead = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, env=env)
    try:
        assert live.stdout is not None and dead.stdout is not None
        live_dir = Path(live.stdout.readline().decode().strip())
        dead_dir = Path(dead.stdout.readline().decode().strip())
        dead.kill()  # SIGKILL: no cleanup ran
        dead.wait()
        assert dead_dir.exists()
        assert prune_run_directories() == 1
        assert not dead_dir.exists()
        assert (live_dir / LOCK_NAME).exists()
    finally:
        for process in (live, dead):
            process.kill()
            process.wait()
            assert process.stdout is not None
            process.stdout.close()


def test_a_fresh_directory_without_its_lock_yet_is_not_pruned(runs: Path) -> None:
    """Bug caught: a run between mkdtemp and its lock has its directory removed under it."""
    young = runs / "run-young"
    old = runs / "run-old"
    young.mkdir(parents=True)
    old.mkdir()
    stale = time.time() - UNLOCKED_GRACE_S - 10
    os.utime(old, (stale, stale))
    assert prune_run_directories() == 1
    assert young.exists()
    assert not old.exists()


def test_the_run_directory_is_private(runs: Path) -> None:
    """Bug caught: another user on the machine can read the world handed to the agent."""
    with run_directory() as directory:
        assert directory.stat().st_mode & 0o777 == 0o700
        sandbox = seeded()
        handed = sandbox.hand_over(directory)
        assert handed.db_path is not None
        assert handed.db_path.stat().st_mode & 0o777 == 0o600
        sandbox.take_back()
        sandbox.close()
