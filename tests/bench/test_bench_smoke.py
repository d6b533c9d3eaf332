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


def test_diff_scale_bench_finds_every_change_on_every_side() -> None:
    """Each side must report exactly the planted changes.

    Fails if a side silently skips work (e.g. the capture path reading an empty log,
    or sqldiff run without `--primarykey` on a different table), so its timing would
    not be comparable.
    """
    data = last_json(str(BENCH / "diff_scale.py"), "--rows", "5000", "--repeat", "1")
    found = data["changes_found"]
    assert isinstance(found, dict)
    assert data["expected_changes"] == 50 + 5 + 5
    assert found == dict.fromkeys(("sqldiff", "kaudit_full", "kaudit_capture", "agentrelbench"), 60)
