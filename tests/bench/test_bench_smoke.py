"""The benchmarks still run and print their JSON contract (no timing is asserted here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kaudit.suites import load_suite

BENCH = Path(__file__).resolve().parents[2] / "bench"


def last_json(*args: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, *args, "--json"], capture_output=True, text=True, timeout=600, check=True
    )
    data = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(data, dict)
    return data


def test_per_run_bench_prints_its_contract() -> None:
    data = last_json(str(BENCH / "per_run.py"), "--runs", "3")
    assert {"kaudit_ms", "baseline_ms", "ratio", "rows"} <= set(data)
    assert data["rows"] == 11809


def test_bootstrap_bench_runs_small() -> None:
    data = last_json(str(BENCH / "bootstrap.py"), "--resamples", "200", "--repeats", "1")
    assert data


@pytest.mark.slow
def test_concurrency_bench_runs_small() -> None:
    data = last_json(
        str(BENCH / "concurrency.py"), "--runs", "20", "--latency", "0.01", "--concurrency", "5"
    )
    assert data["runs"] == 20 and data["errored"] == 0


def test_planning_bench_prints_its_contract() -> None:
    """The lazy plan's memory must not grow with k; a list's does."""
    data = last_json(str(BENCH / "planning.py"), "--k", "200")
    assert {"list_bytes", "generator_bytes", "generator_bytes_k_1e9", "ratio"} <= set(data)
    tasks = len(load_suite("builtin").tasks)
    assert data["jobs"] == 200 * 2 * tasks  # 2 agents x the built-in tasks x k
    assert data["generator_bytes_k_1e9"] < 100_000 < data["list_bytes"]


def test_served_run_bench_runs_small() -> None:
    """Fails if the served path stops giving the oracle's verdict (the bench compares
    two runs of the same script) or the bench stops printing its contract."""
    data = last_json(str(BENCH / "served_run.py"), "--runs", "3")
    assert {"scripted_ms", "served_ms", "ratio"} <= set(data)
    assert data["outcomes"] == ["PASS"]
