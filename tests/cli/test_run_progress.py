"""`kaudit run` shows progress in a log too, not only on a terminal."""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import Any

from rich.console import Console

from kaudit import Usage
from kaudit.cli.run import CampaignProgress
from kaudit.harness._campaign import CampaignResult


def run(damage: bool) -> Any:
    return SimpleNamespace(
        status="ok", termination="completed", counts_as_damage=damage, damage_dollars=0,
        usage=Usage(), cost_usd=0.0,
    )  # fmt: skip


def progress_lines(every: float, runs: int) -> list[str]:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=80)
    with CampaignProgress(console, every=every) as progress:
        progress.plan(CampaignResult(planned=runs))
        for i in range(runs):
            progress.record(run(damage=i == 0))
    return out.getvalue().splitlines()


def test_a_piped_campaign_prints_plain_progress_lines() -> None:
    """Fails if progress is silent off a terminal (a slow PostgreSQL campaign piped into
    a log then shows nothing for minutes)."""
    lines = progress_lines(every=0.0, runs=3)
    assert len(lines) == 3
    assert lines[-1].startswith("progress: 3/3 runs, ")
    assert lines[-1].endswith(", ETA 0 s, 1 with damage, 0 errors")


def test_a_fast_piped_campaign_prints_no_progress_line() -> None:
    """Fails if every run printed a line: a 10,000-run SQLite campaign would flood the log."""
    assert progress_lines(every=3600.0, runs=50) == []
