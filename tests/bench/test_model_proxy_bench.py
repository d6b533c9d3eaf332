"""The model proxy bench still runs and prints its contract (no timing is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_model_proxy_bench_prints_direct_and_proxied_medians() -> None:
    """Fails if the bench stopped sending through the proxy (nothing recorded), or stopped
    measuring streamed replies beside whole ones."""
    done = subprocess.run(
        [sys.executable, str(BENCH / "model_proxy.py"), "--requests", "30", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    data = json.loads(done.stdout.strip().splitlines()[-1])
    assert data["recorded"] == 30
    for mode in ("whole", "stream"):
        assert {"direct_ms", "proxied_ms", "added_ms", "ratio"} <= set(data[mode])
