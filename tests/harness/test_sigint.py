"""Ctrl-C on a real `kaudit run`: it says what was recorded, exits 130, and resumes cleanly."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from kaudit.agents.chat.testserver import ChatTestServer
from kaudit.ledger import Ledger, walk_chain
from tests.harness.test_resume_sigkill import ROOT, K, command, counts, slow_server

__all__ = ["slow_server"]


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_sigint_reports_recorded_runs_exits_130_and_resumes(
    slow_server: ChatTestServer, tmp_path: Path
) -> None:
    """Before, SIGINT ended with exit 130 and no word of what had been recorded."""
    ledger = tmp_path / "audit.sqlite"
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    cmd = command(slow_server, ledger)
    process = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        while process.poll() is None:
            recorded, claimed = counts(ledger)
            if recorded >= 2 and claimed > recorded:
                process.send_signal(signal.SIGINT)
                break
            time.sleep(0.02)
    finally:
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    match = re.search(
        r"interrupted: ([\d,]+) runs? recorded; run the same command to resume", stderr
    )
    assert match is not None, stderr
    recorded, _ = counts(ledger)
    assert int(match.group(1).replace(",", "")) == recorded and 2 <= recorded < K
    resumed = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    with Ledger(ledger, readonly=True) as store:
        assert walk_chain(store).records == K
        assert len({r.run_index for r in store.records()}) == K
