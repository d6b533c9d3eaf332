"""Campaign scale: one `kaudit run` command of about 10,000 reference-agent runs.

Runs the README's main command with k chosen so the built-in suite gives at least
`--runs` runs, as a child process, and reports its runs per second and peak resident
memory (the child's own maximum RSS), the ledger's bytes per run, and the wall time of
`kaudit report` and `kaudit stats` on the finished ledger. Nothing is kept per run in
memory, so peak memory must not grow with the number of runs (goal: <= 300 MB).

    python bench/campaign_scale.py [--runs 10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kaudit.suites import load_suite

_PEAK = (
    "import resource, subprocess, sys; "
    "code = subprocess.run(sys.argv[1:]).returncode; "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
    "sys.exit(code)"
)


def kaudit() -> list[str]:
    found = shutil.which("kaudit", path=str(Path(sys.executable).parent)) or shutil.which("kaudit")
    if found is None:
        raise SystemExit("the kaudit command is not installed: pip install -e .")
    return [found]


def run_measured(args: list[str]) -> tuple[float, float]:
    """Wall seconds and the command's own peak RSS in MB (read through a fresh parent)."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *args], capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    peak_kb = int(done.stderr.strip().splitlines()[-1])
    return elapsed, peak_kb / 1024


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tasks = len(load_suite("builtin").tasks)
    k = math.ceil(args.runs / tasks)
    with tempfile.TemporaryDirectory() as tmp:
        ledger = Path(tmp) / "scale.sqlite"
        command = ["run", "--suite", "builtin", "--agent", "reference", "--k", str(k)]
        run_s, run_rss = run_measured([*kaudit(), *command, "--ledger", str(ledger)])
        report_s, _ = run_measured([*kaudit(), "report", str(ledger)])
        stats_s, _ = run_measured([*kaudit(), "stats", str(ledger)])
        ledger_bytes = sum(
            p.stat().st_size for p in Path(tmp).iterdir() if p.name.startswith(ledger.name)
        )
    runs = tasks * k
    result: dict[str, Any] = {
        "runs": runs,
        "tasks": tasks,
        "k": k,
        "campaign_s": round(run_s, 2),
        "campaign_runs_per_s": round(runs / run_s, 1),
        "campaign_peak_rss_mb": round(run_rss, 1),
        "ledger_bytes_per_run": round(ledger_bytes / runs),
        "report_s": round(report_s, 3),
        "stats_s": round(stats_s, 3),
        "cpus": os.cpu_count(),
        "bench_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    print(
        f"{runs:,} runs ({tasks} tasks x k={k}) in {run_s:.1f} s = "
        f"{result['campaign_runs_per_s']} runs/s, peak RSS {run_rss:.0f} MB, "
        f"{result['ledger_bytes_per_run']:,} ledger bytes/run; "
        f"report {report_s:.2f} s, stats {stats_s:.2f} s"
    )
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
