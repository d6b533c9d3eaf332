"""Campaign planning memory: kaudit's lazy job generator against a materialized job list.

The baseline is what `plan_jobs` used to return: the list of every `RunJob` of the plan,
built before the first run. Both are measured with `tracemalloc` (peak bytes allocated
while planning and taking the first job) for the same plan: 2 agents x the built-in
suite x k. The list grows with k; the generator does not. Prints the ratio at the
largest k the baseline is measured at, and the generator's peak at k = 10**9.

    python bench/planning.py [--k 20000] [--json]
"""

from __future__ import annotations

import argparse
import json
import platform
import tracemalloc
from collections.abc import Callable
from typing import Any

from kaudit.agents import ReferenceAgent, ScriptedAgent
from kaudit.harness import CampaignPlan
from kaudit.harness._campaign import plan_jobs
from kaudit.suites import load_suite


def peak_bytes(build: Callable[[], Any]) -> int:
    """Peak traced allocation while `build` runs (its result is dropped afterwards)."""
    tracemalloc.start()
    try:
        result = build()
        _, peak = tracemalloc.get_traced_memory()
        del result
    finally:
        tracemalloc.stop()
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=20_000, help="k for the materialized list")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args()
    tasks = list(load_suite("builtin").tasks.values())
    agents = [ReferenceAgent(), ScriptedAgent("oracle")]

    def lazy(k: int) -> Callable[[], Any]:
        def take_first() -> Any:
            jobs = plan_jobs(CampaignPlan("c", k=k), agents, tasks)
            return next(jobs), jobs

        return take_first

    def eager() -> Any:
        return list(plan_jobs(CampaignPlan("c", k=args.k), agents, tasks))

    listed = peak_bytes(eager)
    generated = peak_bytes(lazy(args.k))
    billion = peak_bytes(lazy(10**9))
    result = {
        "jobs": args.k * len(agents) * len(tasks),
        "list_bytes": listed,
        "generator_bytes": generated,
        "generator_bytes_k_1e9": billion,
        "ratio": round(listed / max(generated, 1), 1),
        "python": platform.python_version(),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"{result['jobs']:,} jobs: list {listed / 1e6:,.1f} MB, generator "
            f"{generated / 1e3:,.1f} kB ({result['ratio']}x less); "
            f"generator at k = 10**9: {billion / 1e3:,.1f} kB"
        )


if __name__ == "__main__":
    main()
