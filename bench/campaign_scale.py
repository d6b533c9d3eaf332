"""Campaign scale: one `kaudit run` command of about 10,000 reference-agent runs.

Runs the README's main command with k chosen so the built-in suite gives at least
`--runs` runs, as a child process, and reports its runs per second and peak resident
memory (the child's own maximum RSS), the ledger's bytes per run and what takes them,
and the wall and CPU time of `kaudit report` and `kaudit stats` on the finished ledger
(median of `--repeat` runs each; goal: <= 2 s). Nothing is kept per run in memory, so
peak memory must not grow with the number of runs (goal: <= 300 MB).

In one process it also times the read itself side by side: the named baseline is the
full-record path (`Ledger.verify()`, then every `RunRecord` of `Ledger.records()` held
at once, as report and stats read before), against `read_runs`, the one verifying pass
they use now; the ratio is CPU time baseline / one pass.

`--ledger PATH` keeps the ledger there (outside the repository); when PATH already
exists the campaign is skipped and only the reading is measured.

    python bench/campaign_scale.py [--runs 10000] [--repeat 3] [--ledger PATH] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from kaudit.ledger import Ledger, read_runs
from kaudit.suites import load_suite

_PEAK = (
    "import resource, subprocess, sys; "
    "code = subprocess.run(sys.argv[1:]).returncode; "
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "print(usage.ru_maxrss, usage.ru_utime + usage.ru_stime, file=sys.stderr); "
    "sys.exit(code)"
)


def kaudit() -> list[str]:
    found = shutil.which("kaudit", path=str(Path(sys.executable).parent)) or shutil.which("kaudit")
    if found is None:
        raise SystemExit("the kaudit command is not installed: pip install -e .")
    return [found]


def run_measured(args: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS in MB of one command (via a fresh parent)."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    peak_kb, cpu = done.stderr.strip().splitlines()[-1].split()
    return elapsed, float(cpu), int(peak_kb) / 1024


def median_of(args: list[str], repeat: int) -> dict[str, float]:
    """Median wall and CPU seconds, and the largest peak RSS, over `repeat` runs."""
    walls, cpus, peaks = zip(*(run_measured(args) for _ in range(repeat)), strict=True)
    return {
        "wall_s": round(statistics.median(walls), 3),
        "cpu_s": round(statistics.median(cpus), 3),
        "peak_rss_mb": round(max(peaks), 1),
    }


def full_records(path: Path) -> int:
    """The baseline read: verify the chain, then hold every full RunRecord at once."""
    with Ledger(path, readonly=True) as ledger:
        ledger.verify()
        return len(list(ledger.records()))


def one_pass(path: Path) -> int:
    """What report and stats read now: one verifying pass keeping a summary per run."""
    with Ledger(path, readonly=True) as ledger:
        return len(read_runs(ledger).runs)


def read_side_by_side(path: Path, repeat: int) -> dict[str, Any]:
    """CPU seconds (median) of the baseline and the one-pass read, in this process."""
    times: dict[str, list[float]] = {"full_records": [], "one_pass": []}
    counts = set()
    for _ in range(repeat):
        for name, read in (("full_records", full_records), ("one_pass", one_pass)):
            gc.collect()
            start = time.process_time()
            counts.add(read(path))
            times[name].append(time.process_time() - start)
    if len(counts) != 1:
        raise SystemExit(f"the two reads disagree on the number of runs: {sorted(counts)}")
    full, fast = (statistics.median(times[name]) for name in ("full_records", "one_pass"))
    return {
        "full_records_cpu_s": round(full, 3),
        "one_pass_cpu_s": round(fast, 3),
        "ratio": round(full / fast, 2),
    }


def ledger_breakdown(path: Path, runs: int) -> dict[str, Any]:
    """Bytes per run: per SQLite table and index, and per field of the record JSON.

    `twice` counts JSON bytes that repeat something the same record already holds:
    each transcript turn's copy of its tool calls (id, name, arguments), and the
    verdict's copies of the top-level outcome fields.
    """
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = dict(conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"))
    except sqlite3.OperationalError:  # SQLite built without the dbstat table
        tables = {}
    fields: Counter[str] = Counter()
    twice: Counter[str] = Counter()
    copied = ("outcome", "sub_label", "counts_as_damage", "counts_as_damage_upper", "success",
              "severity", "dollars", "termination")  # fmt: skip
    for (body,) in conn.execute("SELECT record FROM runs"):
        data = json.loads(body)
        for name, value in data.items():
            fields[name] += len(json.dumps(value, separators=(",", ":"), sort_keys=True))
        for turn in data.get("transcript", []):
            calls = turn.get("tool_calls") or []
            twice["transcript tool_calls"] += len(json.dumps(calls, separators=(",", ":")))
        verdict = data.get("verdict") or {}
        for name in copied:
            if name in verdict:
                twice["verdict outcome fields"] += len(name) + 4 + len(json.dumps(verdict[name]))
    conn.close()
    per_run = {name: round(size / runs) for name, size in fields.most_common()}
    return {
        "tables_bytes_per_run": {name: round(size / runs) for name, size in tables.items()},
        "record_json_bytes_per_run": sum(per_run.values()),
        "record_fields_bytes_per_run": per_run,
        "stored_twice_bytes_per_run": {name: round(size / runs) for name, size in twice.items()},
    }


def campaign(ledger: Path, runs: int) -> dict[str, Any]:
    """Run the campaign into `ledger` and measure it."""
    tasks = len(load_suite("builtin").tasks)
    k = math.ceil(runs / tasks)
    command = ["run", "--suite", "builtin", "--agent", "reference", "--k", str(k)]
    run_s, run_cpu, run_rss = run_measured([*kaudit(), *command, "--ledger", str(ledger)])
    total = tasks * k
    return {
        "tasks": tasks,
        "k": k,
        "campaign_s": round(run_s, 2),
        "campaign_cpu_s": round(run_cpu, 2),
        "campaign_runs_per_s": round(total / run_s, 1),
        "campaign_peak_rss_mb": round(run_rss, 1),
    }


def measure(ledger: Path, runs: int, repeat: int) -> dict[str, Any]:
    made = {} if ledger.exists() else campaign(ledger, runs)
    with Ledger(ledger, readonly=True) as store:
        recorded = store.head().records
    report = median_of([*kaudit(), "report", str(ledger)], repeat)
    report_json = median_of([*kaudit(), "report", str(ledger), "--json"], repeat)
    stats = median_of([*kaudit(), "stats", str(ledger)], repeat)
    ledger_bytes = sum(
        p.stat().st_size for p in ledger.parent.iterdir() if p.name.startswith(ledger.name)
    )
    skipped = dict.fromkeys(("tasks", "k", "campaign_s", "campaign_cpu_s"), None)
    skipped |= dict.fromkeys(("campaign_runs_per_s", "campaign_peak_rss_mb"), None)
    return (
        {"runs": recorded}
        | skipped
        | made
        | {
            "ledger_bytes_per_run": round(ledger_bytes / recorded),
            "report_s": report["wall_s"],
            "report_json_s": report_json["wall_s"],
            "stats_s": stats["wall_s"],
            "report": report,
            "report_json": report_json,
            "stats": stats,
            "read": read_side_by_side(ledger, repeat),
            "ledger": ledger_breakdown(ledger, recorded),
            "cpus": os.cpu_count(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="Runs of each reading command.")
    parser.add_argument("--ledger", type=Path, help="Keep the ledger here; reuse it if present.")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ledger = args.ledger or Path(tmp) / "scale.sqlite"
        result = measure(ledger, args.runs, args.repeat)
    result["bench_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    if result["campaign_s"] is not None:
        print(
            f"{result['runs']:,} runs ({result['tasks']} tasks x k={result['k']}) in "
            f"{result['campaign_s']:.1f} s = {result['campaign_runs_per_s']} runs/s, "
            f"peak RSS {result['campaign_peak_rss_mb']:.0f} MB"
        )
    read = result["read"]
    print(
        f"ledger: {result['runs']:,} records, {result['ledger_bytes_per_run']:,} bytes/run; "
        f"report {result['report_s']:.2f} s (cpu {result['report']['cpu_s']:.2f} s), "
        f"report --json {result['report_json_s']:.2f} s, stats {result['stats_s']:.2f} s "
        f"(cpu {result['stats']['cpu_s']:.2f} s); load average {result['load_average'][0]}"
    )
    print(
        f"read, CPU: full records {read['full_records_cpu_s']:.2f} s, one pass "
        f"{read['one_pass_cpu_s']:.2f} s, ratio {read['ratio']}"
    )
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
