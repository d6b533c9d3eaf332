"""Kill a real `kaudit run` process with SIGKILL mid-campaign, then resume it."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from kaudit.agents.chat.testserver import ChatTestServer
from kaudit.ledger import Ledger, walk_chain
from tests.agents.chat.personas import mixture
from tests.conftest import FIXTURES

ROOT = Path(__file__).parent.parent.parent
K = 16
# the mini world is registered by the test package, so the CLI runs behind one import
LAUNCH = "import tests.mini_world; from kaudit.cli.main import main; main()"


@pytest.fixture
def slow_server() -> Iterator[ChatTestServer]:
    with ChatTestServer({"slow": mixture(latency_s=0.25)}) as server:
        yield server


def command(server: ChatTestServer, ledger: Path) -> list[str]:
    return [
        sys.executable,
        "-c",
        LAUNCH,
        "run",
        "--suite",
        str(FIXTURES / "mini_suite"),
        "--model",
        "openai:slow",
        "--base-url",
        server.openai_url,
        "--k",
        str(K),
        "--concurrency",
        "4",
        "--seed",
        "9",
        "--ledger",
        str(ledger),
    ]


def counts(ledger: Path) -> tuple[int, int]:
    """(recorded runs, claimed attempts), read the way a second process would."""
    if not ledger.exists():
        return (0, 0)
    try:
        with sqlite3.connect(ledger, timeout=5) as conn:
            runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
            attempts = conn.execute("SELECT COUNT(*) FROM attempts").fetchone()[0]
    except sqlite3.OperationalError:  # tables not created yet
        return (0, 0)
    return (int(runs), int(attempts))


def unfinished_claims(ledger: Path) -> set[tuple[str, str, int]]:
    with sqlite3.connect(ledger) as conn:
        claimed = set(conn.execute("SELECT model, task, run_index FROM attempts"))
        recorded = set(conn.execute("SELECT model, task, run_index FROM runs"))
    return claimed - recorded


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_sigkill_then_same_command_gives_exactly_n_times_k_with_restarts_marked(
    slow_server: ChatTestServer, tmp_path: Path
) -> None:
    ledger = tmp_path / "audit.sqlite"
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    cmd = command(slow_server, ledger)
    process = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        while process.poll() is None:
            recorded, claimed = counts(ledger)
            if recorded >= 2 and claimed > recorded:  # finished runs and runs in flight
                process.send_signal(signal.SIGKILL)
                break
            time.sleep(0.02)
    finally:
        process.wait(timeout=60)
        assert process.stderr is not None
        stderr = process.stderr.read().decode()
        process.stderr.close()
    assert process.returncode == -signal.SIGKILL, stderr
    interrupted = unfinished_claims(ledger)
    recorded_before, _ = counts(ledger)
    assert interrupted and recorded_before < K

    resumed = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"({recorded_before} already in the ledger" in resumed.stderr

    with Ledger(ledger) as store:
        records = list(store.records())
        assert walk_chain(store).records == K
    keys = Counter((r.model, r.task, r.run_index) for r in records)
    assert len(keys) == K and set(keys.values()) == {1}
    restarted = {(r.model, r.task, r.run_index) for r in records if r.restarted > 0}
    assert restarted == interrupted
    assert all(r.status == "labeled" for r in records)
