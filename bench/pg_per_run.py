"""Amortized per-run harness time on PostgreSQL: the previous path and the new one, side by side.

Every built-in task's oracle and first damaging counterexample (scripted agent) run as
one campaign batch at `--concurrency` (4), the way `LocalExecutor` runs them, through
`run_pipeline`; `--repeat` batches per side alternate which side goes first, so a load
that drifts on the shared machine hits every side alike. Sides:

- `previous` (the named baseline, today's default before this change): `reset=clone`,
  each run clones and drops its own database inside the run, the dump copies every
  table (`dump=full`), tool calls on the event loop;
- `previous_rollback`: `reset=rollback` as it was (full dump, rollback inside the run);
- `clone`: clones made ahead by the pool's worker, drops behind, the change-log dump,
  tool calls in a worker thread;
- `rollback`: pooled databases made ahead, the rollback behind, the change-log dump;
- `sqlite`: the same batch on SQLite, for scale.

Per side: `harness_per_run_ms` = (batch wall time - the agent's share, i.e. the sum of
the runs' agent time, here the scripted tool calls, / concurrency) / runs: the amortized
seed + dump + label + cleanup; `per_run_ms` = batch wall time / runs, tool calls
included; the median phases of the runs' own timings (seed, agent, dump, label).
`pg_per_run_ms` is the new rollback path's harness time, `pg_per_run_ms_previous` the
previous default's; `pg_speedup_vs_previous` their ratio (median over paired batches).
`floor_clone` is what one `CREATE DATABASE ... TEMPLATE` and one drop cost alone here,
one after another.

    python bench/pg_per_run.py [--repeat 3] [--concurrency 4] [--tasks A,B] [--url ...] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from typing import Any

from kaudit.agents import ScriptedAgent
from kaudit.harness._run import AgentLoop, RunRequest, RunResult, run_pipeline
from kaudit.postgres._conn import connect
from kaudit.postgres._substrate import PostgresSubstrate
from kaudit.spec import Task
from kaudit.spec._script import Script
from kaudit.substrate import Substrate
from kaudit.suites import Suite, load_suite

URL = "postgresql://postgres@127.0.0.1:5432/postgres"
SIDES = {
    "previous": "?dump=full&ahead=0",
    "previous_rollback": "?reset=rollback&dump=full",
    "clone": "",
    "rollback": "?reset=rollback",
    "sqlite": None,
}
PHASES = ("seed_ms", "agent_ms", "dump_ms", "label_ms")


def cells(suite: Suite) -> list[tuple[Task, Script]]:
    """Each task's oracle, and its first counterexample declared to damage."""
    out = []
    for task in suite.tasks.values():
        out.append((task, task.scripts()[0]))
        damage = next(
            (s for s in task.counterexamples if s.expected.outcome == "FAIL_DAMAGE"), None
        )
        if damage is not None:
            out.append((task, damage))
    return out


def as_before(substrate: Substrate) -> None:
    """The previous path's cleanup: the drop or rollback inside the run, as it was."""
    if isinstance(substrate, PostgresSubstrate):
        substrate.drop_later = substrate.drop_database  # type: ignore[method-assign]
        pool = substrate.pool()
        pool.later = lambda job: job()  # type: ignore[method-assign]


async def batch(
    suite: Suite, work: list[tuple[Task, Script]], concurrency: int, tag: str, before: bool
) -> tuple[float, list[RunResult]]:
    """Every cell once, `concurrency` at a time; (wall ms, results)."""
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int, task: Task, script: Script) -> RunResult:
        agent = ScriptedAgent(script.name)
        request = RunRequest(f"kaudit_bench_{tag}", task, agent.name, run_index=i, seed=i)
        substrate = suite.substrate(task)
        async with gate:
            # The previous path ran tool calls on the event loop: kaudit's loop, no substrate.
            driver = AgentLoop(agent) if before else None
            return await run_pipeline(request, agent, substrate, driver=driver)

    start = time.perf_counter()
    results = await asyncio.gather(*(one(i, t, s) for i, (t, s) in enumerate(work)))
    wall = (time.perf_counter() - start) * 1000.0
    bad = [r.record.invalid_reason for r in results if r.record.status != "labeled"]
    if bad:
        raise SystemExit(f"{tag}: bench runs were INVALID: {bad[:2]}")
    return wall, list(results)


def settle(suite: Suite, work: list[tuple[Task, Script]]) -> None:
    """Wait for every pool's worker (cleanup behind, clones ahead) before the next batch."""
    for task, _ in work:
        substrate = suite.substrate(task)
        if isinstance(substrate, PostgresSubstrate):
            substrate.pool().settle()


def clone_floor(url: str, template: str, runs: int = 5) -> dict[str, float]:
    """One `CREATE DATABASE ... TEMPLATE` and one drop, alone, one after another."""
    creates, drops = [], []
    with connect(url) as admin:
        for i in range(runs):
            name = f"kaudit_x_floor_{os.getpid()}_{i}"
            t0 = time.perf_counter()
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"'.encode())
            t1 = time.perf_counter()
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)'.encode())
            drops.append((time.perf_counter() - t1) * 1000.0)
            creates.append((t1 - t0) * 1000.0)
    return {
        "create_ms": round(statistics.median(creates), 1),
        "drop_ms": round(statistics.median(drops), 1),
    }


def harness_ms(wall: float, done: list[RunResult], concurrency: int) -> float:
    """A batch's amortized harness time per run: its wall time less the agent's share.

    The agent's time (here the scripted agent's tool calls) runs `concurrency` at a time,
    so it takes about `sum(agent_ms) / concurrency` of the wall time.
    """
    agent = sum(r.record.timing.agent_ms for r in done) / concurrency
    return max(0.0, wall - agent) / len(done)


def side_summary(
    walls: list[float], harness: list[float], results: list[RunResult], runs: int
) -> dict[str, Any]:
    timings = [r.record.timing for r in results]
    return {
        "harness_per_run_ms": round(statistics.median(harness), 2),
        "per_run_ms": round(statistics.median(walls) / runs, 2),
        "batch_wall_ms": [round(w, 1) for w in walls],
        "phases_ms": {
            p: round(statistics.median(getattr(t, p) for t in timings), 3) for p in PHASES
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3, help="Batches per side.")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--url", default=URL)
    parser.add_argument("--tasks", default=None, help="Comma-separated task ids (default: all).")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    suites: dict[str, Suite] = {}
    for side, options in SIDES.items():
        suites[side] = load_suite("builtin").on_substrate(
            "sqlite" if options is None else args.url + options
        )
    work = cells(suites["sqlite"])
    if args.tasks:
        work = [(task, script) for task, script in work if task.id in args.tasks.split(",")]
    for side, suite in suites.items():
        for task, _ in work:
            if side.startswith("previous"):
                as_before(suite.substrate(task))
        # Templates built, pools filled, roles made: none of it is a per-run cost.
        asyncio.run(batch(suite, work, args.concurrency, f"warm_{side}", side.startswith("prev")))
        settle(suite, work)
    walls: dict[str, list[float]] = {side: [] for side in SIDES}
    harness: dict[str, list[float]] = {side: [] for side in SIDES}
    results: dict[str, list[RunResult]] = {side: [] for side in SIDES}
    order = list(SIDES)
    for i in range(args.repeat):
        for side in order if i % 2 == 0 else reversed(order):
            before = side.startswith("previous")
            wall, done = asyncio.run(
                batch(suites[side], work, args.concurrency, f"{side}{i}", before)
            )
            settle(suites[side], work)  # cleanup left behind is not the next side's cost
            walls[side].append(wall)
            harness[side].append(harness_ms(wall, done, args.concurrency))
            results[side].extend(done)
    runs = len(work)
    sides = {side: side_summary(walls[side], harness[side], results[side], runs) for side in SIDES}

    def speedup(before: str, after: str) -> float:
        pairs = zip(harness[before], harness[after], strict=True)
        return round(statistics.median(b / a if a else float("inf") for b, a in pairs), 2)

    template = suites["clone"].substrate(work[0][0])
    assert isinstance(template, PostgresSubstrate)
    out: dict[str, Any] = {
        "pg_per_run_ms": sides["rollback"]["harness_per_run_ms"],
        "pg_per_run_ms_previous": sides["previous"]["harness_per_run_ms"],
        "pg_speedup_vs_previous": speedup("previous", "rollback"),
        "pg_speedup_vs_previous_rollback": speedup("previous_rollback", "rollback"),
        "pg_per_run_ms_previous_rollback": sides["previous_rollback"]["harness_per_run_ms"],
        "pg_per_run_ms_clone": sides["clone"]["harness_per_run_ms"],
        "pg_clone_speedup_vs_previous": speedup("previous", "clone"),
        "sqlite_per_run_ms": sides["sqlite"]["harness_per_run_ms"],
        "floor_clone": clone_floor(template.url, template.ensure_template()),
        "runs_per_batch": runs,
        "concurrency": args.concurrency,
        "repeat": args.repeat,
        "sides": sides,
    }
    if args.json:
        print(json.dumps(out))
        return
    print(f"{runs} runs per batch at concurrency {args.concurrency}, {args.repeat} batches/side")
    head = ("harness", "w/ tools", "seed", "agent", "dump", "label")
    print(f"{'side (ms per run)':<20}" + "".join(f"{h:>10}" for h in head))
    for side, row in sides.items():
        p = row["phases_ms"]
        shown = (row["harness_per_run_ms"], row["per_run_ms"], *(p[k] for k in PHASES))
        print(f"{side:<20}" + "".join(f"{c:>10.1f}" for c in shown))
    print(
        f"harness, rollback vs previous: {out['pg_speedup_vs_previous']}x; vs previous "
        f"rollback: {out['pg_speedup_vs_previous_rollback']}x; clone vs previous: "
        f"{out['pg_clone_speedup_vs_previous']}x"
    )
    floor = out["floor_clone"]
    print(f"CREATE DATABASE ... TEMPLATE alone: {floor['create_ms']} ms; DROP: {floor['drop_ms']}")


if __name__ == "__main__":
    main()
