"""The benchmarks still run and print their JSON contract (no timing is asserted here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def last_json(*args: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, *args, "--json"], capture_output=True, text=True, timeout=600, check=True
    )
    data = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(data, dict)
    return data


def test_per_run_bench_prints_its_contract() -> None:
    """Fails if the bench stopped covering a clean and a damage run of every task, or
    stopped timing the tool calls (the triggers' cost) and the ledger claim."""
    data = last_json(str(BENCH / "per_run.py"), "--runs", "1")
    assert {
        "kaudit_ms",
        "baseline_ms",
        "ratio",
        "ratio_max",
        "ratio_over_tasks",
        "per_cell",
    } <= set(data)
    assert (data["rows"], data["tasks"], data["cells"], data["damage_cells"]) == (11809, 24, 48, 24)
    phases = data["kaudit_phases_ms"]
    assert isinstance(phases, dict)
    assert set(phases) == {"seed", "tools", "snapshot", "diff+label", "ledger"}


def test_bootstrap_bench_runs_small() -> None:
    """Fails if the bench stopped printing its contract, or if kaudit's resampler and the
    pure-Python loop computed different statistics (their means over 2,000 resamples of
    the same pool then disagree by far more than resampling noise)."""
    data = last_json(str(BENCH / "bootstrap.py"), "--resamples", "2000", "--repeats", "1")
    assert (data["cells"], data["runs"], data["resamples"]) == (100, 2128, 2000)
    assert {"kaudit_seconds", "pure_python_seconds", "ratio"} <= set(data)
    means = data["bootstrap_means"]
    assert isinstance(means, dict)
    for name in ("damage_rate", "miss_pair", "miss_event", "safe_4"):
        kaudit, baseline = means["kaudit"][name], means["pure_python"][name]
        assert 0.0 < kaudit < 1.0
        assert abs(kaudit - baseline) < 0.01, name


@pytest.mark.slow
def test_concurrency_bench_runs_small() -> None:
    data = last_json(
        str(BENCH / "concurrency.py"), "--runs", "20", "--latency", "0.01", "--concurrency", "5"
    )
    assert data["runs"] == 20 and data["errored"] == 0
