"""Every benchmark in one command, summarized as the performance contract's JSON object.

Installs what the benchmarks need first (`pip install -e .[bench]`; Debian's
`sqlite3-tools` for `sqldiff` when it is missing), then runs each benchmark in its own
process with `--json` and prints one object: the headline ratios and, under `details`,
each benchmark's own output. A key is null when its benchmark does not report it.

    python bench/run_all.py [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"


def install() -> None:
    """The bench extra and sqldiff; both are no-ops when already present."""
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "-e", f"{ROOT}[bench]"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    if shutil.which("sqldiff") is None:
        subprocess.run(["apt-get", "install", "-y", "-qq", "sqlite3-tools"], check=True)


def optional_bench(name: str, *args: str) -> dict[str, Any]:
    """`bench`, or {} when it fails (the PostgreSQL bench needs a server): its keys go null."""
    try:
        return bench(name, *args)
    except subprocess.CalledProcessError as exc:
        last = (exc.stderr or "").strip().splitlines()[-1:] or [""]
        return {"error": last[0]}


def bench(name: str, *args: str) -> dict[str, Any]:
    """The last JSON line a benchmark prints, with its wall time."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(BENCH / name), *args, "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    data: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    data["bench_wall_s"] = round(time.perf_counter() - start, 1)
    return data


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="Small sizes, for a smoke run.")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    install()
    quick = args.quick
    details = {
        # 20 runs a cell and side keep the medians steady and the whole command under
        # ten minutes on a loaded two-core machine (50 took 7.6 of them alone)
        "per_run": bench("per_run.py", "--runs", "5" if quick else "20"),
        "diff_scale": bench("diff_scale.py", "--rows", "20000" if quick else "1000000"),
        "campaign_scale": bench("campaign_scale.py", "--runs", "200" if quick else "10000"),
        "model_bound": bench(
            "concurrency.py",
            *("--runs", "50" if quick else "1000", "--concurrency", "20" if quick else "100"),
            *("--latency", "0.05" if quick else "0.2", "--executor", "both"),
        ),
        "ledger_writer": bench(
            "ledger_writer.py",
            *(("--records", "500", "--runs", "100", "--workers", "2") if quick else ()),
        ),
        "bootstrap": bench("bootstrap.py", *(("--resamples", "500") if quick else ())),
        "pg_per_run": optional_bench("pg_per_run.py", "--repeat", "1" if quick else "3"),
    }
    per_run, diff, scale = details["per_run"], details["diff_scale"], details["campaign_scale"]
    model, boot, writer = details["model_bound"], details["bootstrap"], details["ledger_writer"]
    pg = details["pg_per_run"]
    summary = {
        "overhead_ratio_vs_agentrelbench": per_run.get("ratio"),
        "overhead_ratio_vs_floor": per_run.get("ratio_vs_floor"),
        "overhead_ratio_vs_floor_max": per_run.get("ratio_vs_floor_max"),
        "overhead_ratio_vs_floor_with_tools_max": per_run.get("ratio_vs_floor_with_tools_max"),
        # Amortized harness ms per run on PostgreSQL (rollback path, concurrency 4), and
        # how many times faster than the previous default path, measured side by side.
        "pg_per_run_ms": pg.get("pg_per_run_ms"),
        "pg_speedup_vs_previous": pg.get("pg_speedup_vs_previous"),
        # The worse of the full diff and the change-capture diff, then each by name.
        "diff_ratio_vs_sqldiff": diff.get("diff_ratio_vs_sqldiff"),
        "diff_speedup_vs_agentrelbench": diff.get("diff_speedup_vs_agentrelbench"),
        "diff_ratio_vs_sqldiff_full": diff.get("diff_ratio_vs_sqldiff_full"),
        "diff_ratio_vs_sqldiff_capture": diff.get("diff_ratio_vs_sqldiff_capture"),
        "diff_speedup_vs_agentrelbench_full": diff.get("diff_speedup_vs_agentrelbench_full"),
        "diff_speedup_vs_agentrelbench_capture": diff.get("diff_speedup_vs_agentrelbench_capture"),
        "campaign_runs_per_s": scale.get("campaign_runs_per_s"),
        "campaign_peak_rss_mb": scale.get("campaign_peak_rss_mb"),
        "report_s": scale.get("report_s"),
        "stats_s": scale.get("stats_s"),
        "gate_s": scale.get("gate_s"),
        "gate_peak_rss_mb": scale.get("gate_peak_rss_mb"),
        "model_bound_ratio_vs_ideal": model.get("ratio"),
        "model_bound_harness_cpu_ms_per_reply": model.get("harness_cpu_ms_per_reply"),
        "model_bound_sdk_floor_cpu_ms_per_reply": model.get("sdk_floor_cpu_ms_per_reply"),
        "model_bound_implied_quiet_ratio_range": (model.get("cpu_budget") or {}).get(
            "implied_quiet_ratio_range"
        ),
        "ray_overhead_ms_per_run": model.get("ray_overhead_ms_per_run"),
        "ledger_records_per_s": writer.get("ledger_records_per_s"),
        "ray_driver_ceiling_runs_per_s": writer.get("ray_driver_ceiling_runs_per_s"),
        "bootstrap_s": boot.get("kaudit_seconds"),
        "quick": quick,
        "details": details,
    }
    if args.json:
        print(json.dumps(summary))
        return
    for key, value in summary.items():
        if key != "details":
            print(f"{key:<34}{value}")


if __name__ == "__main__":
    main()
