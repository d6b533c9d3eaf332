"""Ledger write throughput: how many runs a second the one ledger writer records.

Every campaign has exactly one writer: the process that holds the ledger claims each run
before it starts and appends its record, one transaction each, before reporting it (a
finished run is durable before anyone hears of it). Three measurements of that writer:

- `sqlite`: `claim` + `append` of a realistic record (the mini world's oracle run, about
  3 KB of canonical JSON) in a tight loop under distinct keys: the writer's own ceiling.
- `local`: a campaign of zero-latency runs (the scripted oracle) on the local executor:
  runs and writes share one process and one core.
- `ray`: the same campaign on `--workers` Ray actors: the runs execute in the workers and
  every record travels back to this process to be claimed and appended. The driver's
  CPU per run (`driver_cpu_ms_per_run`: admission, the actor call, the result's
  transfer, the two writes) bounds what one driver can record: at most
  `driver_ceiling_runs_per_s` = 1000 / that, with a core of its own.

On a two-core machine the Ray workers and the driver share the cores, so `ray` measures
the whole loop, not the writer alone; the ceiling is what a cluster's head node gets.

    python bench/ledger_writer.py [--records 5000] [--runs 2000] [--workers 4] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the mini world and its suite live in the test package

import tests.mini_world  # noqa: E402, F401  (registers the 'mini' world)

from kaudit.agents import ScriptedAgent  # noqa: E402
from kaudit.harness import CampaignPlan, Executor, run_campaign  # noqa: E402
from kaudit.harness._executor import LocalExecutor  # noqa: E402
from kaudit.harness._ray import RayExecutor  # noqa: E402
from kaudit.ledger import Ledger, RunRecord, canonical, walk_chain  # noqa: E402
from kaudit.suites import Suite, load_yaml_suite  # noqa: E402


def mini_suite() -> Suite:
    return load_yaml_suite(ROOT / "tests" / "fixtures" / "mini_suite", "mini")


def campaign(runs: int, executor: Executor, path: Path) -> tuple[float, float, list[RunRecord]]:
    """(wall s, this process's CPU s, records) of `runs` scripted oracle runs."""
    records: list[RunRecord] = []
    with Ledger(path) as ledger:
        start, cpu = time.perf_counter(), time.process_time()
        asyncio.run(
            run_campaign(
                CampaignPlan("writer", k=runs),
                mini_suite(),
                [ScriptedAgent()],
                ledger,
                executor=executor,
                on_result=records.append,
            )
        )
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        held = walk_chain(ledger).records
        if held != runs or len(records) != runs:
            raise SystemExit(f"expected {runs} records, the ledger holds {held}")
    return elapsed, cpu, records


def sqlite_ceiling(template: RunRecord, records: int, path: Path) -> dict[str, Any]:
    """Claim + append of `records` copies of `template` under distinct keys."""
    copies = [template.model_copy(update={"run_index": i}) for i in range(records)]
    appends: list[float] = []
    with Ledger(path) as ledger:
        ledger.open_campaign(template.campaign, {})
        start = time.perf_counter()
        for record in copies:
            ledger.claim((record.campaign, record.model, record.task, record.run_index))
            t0 = time.perf_counter()
            ledger.append(record)
            appends.append(time.perf_counter() - t0)
        elapsed = time.perf_counter() - start
    return {
        "records": records,
        "record_bytes": len(canonical(template).encode()),
        "records_per_s": round(records / elapsed),
        "append_ms_median": round(statistics.median(appends) * 1000, 3),
        "append_ms_p99": round(sorted(appends)[int(len(appends) * 0.99)] * 1000, 3),
    }


def on_ray(runs: int, workers: int, concurrency: int, path: Path) -> dict[str, Any]:
    import ray

    # the workers unpickle the mini world's tools, which live in the test package
    ray.init(
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}},
    )
    try:
        executor = RayExecutor(workers=workers, concurrency=concurrency)
        elapsed, cpu, _ = campaign(runs, executor, path)
    finally:
        ray.shutdown()
    stats = executor.stats
    if stats is None:
        raise SystemExit("the Ray executor reported no stats")
    driver_ms = cpu / runs * 1000
    return {
        "workers": workers,
        "concurrency": concurrency,
        "runs": runs,
        "startup_s": round(stats.startup_s, 3),
        "runs_per_s": round(runs / (elapsed - stats.startup_s)),
        "driver_cpu_ms_per_run": round(driver_ms, 3),
        "worker_cpu_ms_per_run": round(stats.worker_cpu_s / runs * 1000, 3),
        "driver_ceiling_runs_per_s": round(1000 / driver_ms),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        elapsed, cpu, records = campaign(
            args.runs, LocalExecutor(args.concurrency), folder / "local.sqlite"
        )
        local = {
            "runs": args.runs,
            "runs_per_s": round(args.runs / elapsed),
            "cpu_ms_per_run": round(cpu / args.runs * 1000, 3),
        }
        sqlite = sqlite_ceiling(records[0], args.records, folder / "sqlite.sqlite")
        ray = on_ray(args.runs, args.workers, args.concurrency, folder / "ray.sqlite")
    out = {
        "sqlite": sqlite,
        "local": local,
        "ray": ray,
        "ledger_records_per_s": sqlite["records_per_s"],
        "ray_recorded_runs_per_s": ray["runs_per_s"],
        "ray_driver_ceiling_runs_per_s": ray["driver_ceiling_runs_per_s"],
    }
    if args.json:
        print(json.dumps(out))
        return
    print(
        f"one writer, claim + append of a {sqlite['record_bytes']} B record: "
        f"{sqlite['records_per_s']} records/s (append median {sqlite['append_ms_median']} ms, "
        f"p99 {sqlite['append_ms_p99']} ms)\n"
        f"local campaign of {local['runs']} zero-latency runs: {local['runs_per_s']} runs/s, "
        f"{local['cpu_ms_per_run']} ms CPU a run\n"
        f"Ray, {ray['workers']} workers into one writer: {ray['runs_per_s']} runs/s; driver "
        f"{ray['driver_cpu_ms_per_run']} ms CPU a run (ceiling {ray['driver_ceiling_runs_per_s']}"
        f" runs/s on its own core), workers {ray['worker_cpu_ms_per_run']} ms a run"
    )


if __name__ == "__main__":
    main()
