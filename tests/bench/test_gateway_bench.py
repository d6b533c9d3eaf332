"""The gateway benchmark still runs and prints its JSON contract (no timing asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "gateway.py"


def test_gateway_bench_prints_its_contract() -> None:
    """Fails if the benchmark breaks or stops reporting both sides and their ratio."""
    done = subprocess.run(
        [sys.executable, str(BENCH), "--calls", "20", "--repeats", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    data = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"baseline_ms_per_call", "gateway_ms_per_call", "ratio"} <= set(data)
    assert data["calls"] == 20
