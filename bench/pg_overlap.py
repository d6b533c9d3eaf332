"""Whether concurrent PostgreSQL runs overlap their seeding, dump and cleanup.

N runs of one built-in task (reference agent, enterprise world, 11,809 rows) are started
together with `asyncio.gather`, as `LocalExecutor` does under `--concurrency N`, and
the wall time of the batch is measured two ways in this process, alternating:

- `before`: the named baseline, substrate work on the event loop (what the pipeline
  did before it moved it off): each clone, dump and drop stalls every other run;
- `after`: the pipeline as it is, PostgreSQL work in worker threads.

`ratio` is the median of before / after over pairs of batches that alternate which side
goes first (above 1: the runs now overlap). The SQLite line measures what
the change costs the SQLite path, which stays inline: the same batch with the baseline
and the current code (ratio ≈ 1 expected; five times the batches, as they are short),
and the per-call cost of `off_loop` itself against a direct call.

    python bench/pg_overlap.py [--runs 8] [--repeat 5] [--url postgresql://...] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

from kaudit.agents import ReferenceAgent
from kaudit.harness import _offload
from kaudit.harness._run import RunRequest, run_pipeline
from kaudit.spec import Task
from kaudit.substrate import Substrate
from kaudit.suites import load_suite

URL = "postgresql://postgres@127.0.0.1:5432/postgres"
TASK = "itsm/incident-delete-duplicate"


def _inline(_: Substrate) -> bool:
    return True


async def _batch(substrate: Substrate, task: Task, runs: int, tag: str) -> float:
    agent = ReferenceAgent()
    requests = [
        RunRequest(f"kaudit_bench_{tag}", task, agent.name, run_index=i, seed=i)
        for i in range(runs)
    ]
    start = time.perf_counter()
    results = await asyncio.gather(*(run_pipeline(r, agent, substrate) for r in requests))
    elapsed = (time.perf_counter() - start) * 1000.0
    invalid = [r.record.invalid_reason for r in results if r.record.status != "labeled"]
    if invalid:
        raise SystemExit(f"bench runs were INVALID: {invalid[:2]}")
    return elapsed


def _side_by_side(substrate: Substrate, task: Task, runs: int, repeat: int) -> dict[str, float]:
    """Medians of each side and of the paired ratios.

    Pairs alternate which side goes first, so a load that drifts on the shared machine
    hits both sides alike.
    """
    current = _offload.runs_inline

    def before(tag: str) -> float:
        _offload.runs_inline = _inline
        try:
            return asyncio.run(_batch(substrate, task, runs, tag))
        finally:
            _offload.runs_inline = current

    def after(tag: str) -> float:
        return asyncio.run(_batch(substrate, task, runs, tag))

    asyncio.run(_batch(substrate, task, runs, "warm"))  # template built, pool filled, role made
    befores, afters = [], []
    for i in range(repeat):
        if i % 2:
            afters.append(after(f"a{i}"))
            befores.append(before(f"b{i}"))
        else:
            befores.append(before(f"b{i}"))
            afters.append(after(f"a{i}"))
    ratios = [b / a for b, a in zip(befores, afters, strict=True)]
    return {
        "before_ms": round(statistics.median(befores), 1),
        "after_ms": round(statistics.median(afters), 1),
        "ratio": round(statistics.median(ratios), 2),
    }


def _call_cost(substrate: Substrate, calls: int = 20000) -> float:
    """Extra µs per `off_loop` call on the inline path, against calling the work directly."""

    def work() -> int:
        return 1

    async def through() -> None:
        for _ in range(calls):
            await _offload.off_loop(substrate, work)

    async def direct() -> None:
        for _ in range(calls):
            work()

    t0 = time.perf_counter()
    asyncio.run(through())
    t1 = time.perf_counter()
    asyncio.run(direct())
    t2 = time.perf_counter()
    return round(((t1 - t0) - (t2 - t1)) / calls * 1e6, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--url", default=URL)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result: dict[str, Any] = {"runs": args.runs, "repeat": args.repeat}
    for name, choice in (
        ("postgresql", args.url),
        ("postgresql_rollback", args.url + "?reset=rollback"),
        ("sqlite", "sqlite"),
    ):
        suite = load_suite("builtin", choice)
        task = suite.tasks[TASK]
        repeat = args.repeat * 5 if name == "sqlite" else args.repeat  # cheap, and noisy
        result[name] = _side_by_side(suite.substrate(task), task, args.runs, repeat)
        if name == "sqlite":
            result[name]["off_loop_us_per_call"] = _call_cost(suite.substrate(task))
    if args.json:
        print(json.dumps(result))
        return
    print(f"{args.runs} concurrent runs of {TASK}, median of {args.repeat} batches, wall ms")
    print(f"{'substrate':<22}{'before':>10}{'after':>10}{'ratio':>8}")
    for name in ("postgresql", "postgresql_rollback", "sqlite"):
        row = result[name]
        print(f"{name:<22}{row['before_ms']:>10.1f}{row['after_ms']:>10.1f}{row['ratio']:>8.2f}")
    print(f"off_loop on the inline path: +{result['sqlite']['off_loop_us_per_call']} µs per call")


if __name__ == "__main__":
    main()
