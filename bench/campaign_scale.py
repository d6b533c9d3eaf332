"""Campaign scale: one `kaudit run` command of about 10,000 reference-agent runs.

Runs the README's main command with k chosen so the built-in suite gives at least
`--runs` runs, as a child process, and reports its runs per second and peak resident
memory (the child's own maximum RSS), the ledger's bytes per run and what takes them,
and the wall and CPU time and peak memory of `kaudit report`, `report --json`, `stats`,
`gate --authority propose` and `ledger verify` on the finished ledger (median of
`--repeat` runs each; goal: <= 2 s, the gate <= 150 MB). Nothing is kept per run in
memory, so peak memory must not grow with the number of runs (goal: <= 300 MB).

`--baseline-src DIR` times the same commands, alternating run by run, with another
kaudit's source first on PYTHONPATH (`git archive COMMIT src | tar -x -C DIR` then
`--baseline-src DIR/src`) and reports its medians under `baseline` and each command's
wall and CPU ratio now / baseline.

In one process it also times the read itself side by side: the named baseline is the
full-record path (`walk_chain(ledger)`, then every `RunRecord` of `Ledger.records()` held
at once, as report and stats read before), against `read_runs`, the one verifying pass
they use now; the ratio is CPU time baseline / one pass.

`--ledger PATH` keeps the ledger there (outside the repository); when PATH already
exists the campaign is skipped and only the reading is measured.

    python bench/campaign_scale.py [--runs 10000] [--repeat 3] [--ledger PATH]
        [--baseline-src DIR] [--json]
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

from kaudit.ledger import Ledger, read_runs, walk_chain
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


def run_measured(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS in MB of one command (via a fresh parent)."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        env=env,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    peak_kb, cpu = done.stderr.strip().splitlines()[-1].split()
    return elapsed, float(cpu), int(peak_kb) / 1024


def summarize(samples: list[tuple[float, float, float]]) -> dict[str, float]:
    """Median wall and CPU seconds, and the largest peak RSS, of a command's runs."""
    walls, cpus, peaks = zip(*samples, strict=True)
    return {
        "wall_s": round(statistics.median(walls), 3),
        "cpu_s": round(statistics.median(cpus), 3),
        "peak_rss_mb": round(max(peaks), 1),
    }


READING = ("report", "report_json", "stats", "gate", "verify")


def reading_commands(ledger: Path) -> dict[str, list[str]]:
    """The commands that read a finished ledger, by result key (`READING`)."""
    path = str(ledger)
    commands = {
        "report": ["report", path],
        "report_json": ["report", path, "--json"],
        "stats": ["stats", path],
        # grants on any verified ledger with a run per cell (exit 0; a deny exits 3)
        "gate": ["gate", path, "--authority", "propose"],
        "verify": ["ledger", "verify", path],
    }
    return {key: commands[key] for key in READING}


def time_commands(
    ledger: Path, repeat: int, baseline_src: Path | None
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Each reading command `repeat` times, alternating with the baseline source if given.

    The baseline runs `python -m kaudit` with `baseline_src` first on PYTHONPATH; so does
    this side then, so both pay the same start-up.
    """
    now_cmd = kaudit() if baseline_src is None else [sys.executable, "-m", "kaudit"]
    env = dict(os.environ)
    path = os.pathsep.join([str(baseline_src), env.get("PYTHONPATH", "")])
    before_env = env | {"PYTHONPATH": path}
    now: dict[str, list[tuple[float, float, float]]] = {}
    before: dict[str, list[tuple[float, float, float]]] = {}
    for _ in range(repeat):
        for key, args in reading_commands(ledger).items():
            now.setdefault(key, []).append(run_measured([*now_cmd, *args], env))
            if baseline_src is not None:
                run = run_measured([sys.executable, "-m", "kaudit", *args], before_env)
                before.setdefault(key, []).append(run)
    measured = {key: summarize(samples) for key, samples in now.items()}
    if baseline_src is None:
        return measured, None
    base = {key: summarize(samples) for key, samples in before.items()}
    ratios = {
        key: {
            "wall": round(measured[key]["wall_s"] / base[key]["wall_s"], 2),
            "cpu": round(measured[key]["cpu_s"] / base[key]["cpu_s"], 2),
        }
        for key in measured
    }
    return measured, {"src": str(baseline_src), "commands": base, "ratio_now_over_baseline": ratios}


def full_records(path: Path) -> int:
    """The baseline read: verify the chain, then hold every full RunRecord at once."""
    with Ledger(path, readonly=True) as ledger:
        walk_chain(ledger)
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


def measure(
    ledger: Path, runs: int, repeat: int, baseline_src: Path | None = None
) -> dict[str, Any]:
    made = {} if ledger.exists() else campaign(ledger, runs)
    with Ledger(ledger, readonly=True) as store:
        recorded = store.head().records
    commands, baseline = time_commands(ledger, repeat, baseline_src)
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
            "report_s": commands["report"]["wall_s"],
            "report_json_s": commands["report_json"]["wall_s"],
            "stats_s": commands["stats"]["wall_s"],
            "gate_s": commands["gate"]["wall_s"],
            "gate_peak_rss_mb": commands["gate"]["peak_rss_mb"],
            "verify_s": commands["verify"]["wall_s"],
            **commands,
            "baseline": baseline,
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
    parser.add_argument(
        "--baseline-src", type=Path, help="Also time another kaudit source tree (its src/)."
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ledger = args.ledger or Path(tmp) / "scale.sqlite"
        result = measure(ledger, args.runs, args.repeat, args.baseline_src)
    result["bench_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    if result["campaign_s"] is not None:
        print(
            f"{result['runs']:,} runs ({result['tasks']} tasks x k={result['k']}) in "
            f"{result['campaign_s']:.1f} s = {result['campaign_runs_per_s']} runs/s, "
            f"peak RSS {result['campaign_peak_rss_mb']:.0f} MB"
        )
    print(
        f"ledger: {result['runs']:,} records, {result['ledger_bytes_per_run']:,} bytes/run; "
        f"load average {result['load_average'][0]}"
    )
    base = result["baseline"]
    for key in READING:
        line = f"  {key:<12} wall {result[key]['wall_s']:.2f} s  cpu {result[key]['cpu_s']:.2f} s"
        line += f"  peak {result[key]['peak_rss_mb']:.0f} MB"
        if base is not None:
            was, ratio = base["commands"][key], base["ratio_now_over_baseline"][key]
            line += (
                f"   baseline wall {was['wall_s']:.2f} s  cpu {was['cpu_s']:.2f} s  "
                f"peak {was['peak_rss_mb']:.0f} MB   ratio wall {ratio['wall']}  cpu {ratio['cpu']}"
            )
        print(line)
    read = result["read"]
    print(
        f"read, CPU: full records {read['full_records_cpu_s']:.2f} s, one pass "
        f"{read['one_pass_cpu_s']:.2f} s, ratio {read['ratio']}"
    )
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
