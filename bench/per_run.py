"""Per-run harness overhead: kaudit beside the published AgentRelBench pipeline and a floor.

For every task of the suite, two scripted runs are timed: the oracle (a clean run) and
the first counterexample that damages (a damage run). Each run is timed three ways, in
the same process, interleaved (the order rotates on every run):

- kaudit: exactly what a campaign does per run, through the campaign's own functions:
  `CampaignRunner.admit` (stopping rule, ledger claim), `RunWork` (which calls
  `run_pipeline`: seed, the scripted agent driven through the `ToolGateway` with its
  recording and limits layers, dump, diff via the change log, checks, the typed
  `RunRecord`, the task digest stamped on it) and `Ledger.append` (canonical JSON, the
  hash chain, one transaction). Phases: seed, tools (the agent loop), snapshot (the
  dump), diff+label, record (gateway set-up, record building, everything else in the
  pipeline) and ledger (claim plus append).
- baseline: the same tool calls on the same template without triggers, `SELECT *` of
  every table into dicts after the run (the initial state's dump is taken once per task
  and reused, as kaudit reuses its parsed template), `agentrelbench.labeler.label_run`
  called as a library, a JSON line appended.
- floor: what any harness that seeds a private copy and keeps the final state must do:
  `deserialize()` of the world's image into a new connection, reading the rows the run
  changed by key, `serialize()` of the state. The image is the cell's real final state
  and the rows are the ones its full diff reports. It runs no tool call, so for a run
  whose only work is reading (it changes no row) it is two copies of the image and
  nothing the agent asked for; `floor+tools` adds the baseline's bare tool calls of the
  same cell (their median, measured in the same run), what a harness that also runs
  the agent's calls cannot avoid.

Per (task, script) the median total of each side is taken; `ratio` is the median over
cells of kaudit / baseline (goal <= 0.04), `ratio_max` the worst cell, `ratio_over_tasks`
the median over tasks of the ratio of a task's clean plus damage run, `ratio_vs_floor`
the median over cells of kaudit / floor (goal <= 3), `ratio_vs_floor_max` the worst,
`ratio_vs_floor_with_tools` and `ratio_vs_floor_with_tools_max` the same against
floor+tools.

    python bench/per_run.py [--runs 10] [--suite builtin] [--task ID] [--keep-dumps]
        [--grouped] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from agentrelbench import labeler as arb

from kaudit.agents import ScriptedAgent
from kaudit.harness import CampaignRunner, RunJob, RunResult, RunWork
from kaudit.harness._seeds import run_seed
from kaudit.label.diff import diff_images
from kaudit.ledger import Ledger, walk_chain
from kaudit.spec import Task
from kaudit.spec._script import Script
from kaudit.substrate import Sandbox, StateDump, Substrate, quote, read_schema
from kaudit.substrate._capture import CHANGE_LOG
from kaudit.substrate._sqlite import SqliteSandbox
from kaudit.suites import Suite, load_suite
from kaudit.tools import ToolContext

PHASES = ("seed", "tools", "snapshot", "diff+label", "record", "ledger")
CAMPAIGN = "bench"
Timer = dict[str, float]


def timed(phases: Timer, name: str, fn: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    out = fn()
    phases[name] = phases.get(name, 0.0) + (time.perf_counter() - start) * 1000.0
    return out


def apply_script(task: Task, script: Script, substrate: Substrate, sandbox: Sandbox) -> None:
    ctx = ToolContext(db=sandbox.db)
    for step in script.steps:
        for call in step.tool_calls:
            substrate.tools[call.name].call(ctx, dict(call.arguments))


def without_capture(image: bytes) -> bytes:
    """The same world without kaudit's triggers and change log: what the baseline runs on."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.deserialize(image)
    names = conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()
    for (name,) in names:
        conn.execute(f"DROP TRIGGER {quote(name)}")
    conn.execute(f"DROP TABLE {CHANGE_LOG}")
    conn.execute("VACUUM")
    out = conn.serialize()
    conn.close()
    return out


def select_all(
    conn: sqlite3.Connection, keys: dict[str, tuple[str, ...]]
) -> dict[str, list[dict[str, Any]]]:
    """The published dump: every row of every table as a dict; composite keys joined."""
    state: dict[str, list[dict[str, Any]]] = {}
    for table, key in keys.items():
        cursor = conn.execute(f"SELECT * FROM {quote(table)}")
        names = [c[0] for c in cursor.description]
        rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        if len(key) > 1:
            for row in rows:
                row["__pk"] = tuple(row[c] for c in key)
        state[table] = rows
    return state


RowRead = tuple[str, tuple[Any, ...]]
"""One changed row as the floor reads it: a keyed SELECT and its key values."""


@dataclass
class Cell:
    """One (task, script) pair and everything the three sides reuse across its runs."""

    task: Task
    script: Script
    substrate: Substrate
    plain: StateDump
    keys: dict[str, tuple[str, ...]]
    initial_rows: dict[str, list[dict[str, Any]]]
    spec: Any
    runner: CampaignRunner
    final_image: bytes
    changed: list[RowRead]


def kaudit_run(cell: Cell, ledger: Ledger, loop: asyncio.AbstractEventLoop, i: int) -> Timer:
    """One run as a campaign does it: admit (claim), execute (`run_pipeline`), append."""
    runner = cell.runner
    model = next(iter(runner.work.agents))
    job = RunJob(CAMPAIGN, model, cell.task.id, i, run_seed(0, model, cell.task.id, i))
    phases: Timer = {}
    restarted = timed(phases, "ledger", lambda: runner.admit(job))
    start = time.perf_counter()
    result: RunResult = loop.run_until_complete(runner.work(job, restarted))
    work_ms = (time.perf_counter() - start) * 1000.0
    if result.record.status != "labeled":
        raise SystemExit(f"{cell.task.id}/{cell.script.name}: {result.record.invalid_reason}")
    timing = result.record.timing
    phases |= {
        "seed": timing.seed_ms,
        "tools": timing.agent_ms,
        "snapshot": timing.dump_ms,
        "diff+label": timing.label_ms,
    }
    phases["record"] = work_ms - sum(phases[p] for p in PHASES[:4])
    timed(phases, "ledger", lambda: ledger.append(result.record, result.final_image))
    return phases


def baseline_run(cell: Cell, out: TextIO, i: int) -> Timer:
    phases: Timer = {}
    sandbox = timed(phases, "seed", lambda: SqliteSandbox(f"b{i}", cell.plain))
    timed(phases, "tools", lambda: apply_script(cell.task, cell.script, cell.substrate, sandbox))
    final = timed(phases, "snapshot", lambda: select_all(sandbox._conn, cell.keys))
    sandbox.close()
    volatile = {t: list(c) for t, c in cell.substrate.volatile.items()}
    pks = {t: (k[0] if len(k) == 1 else "__pk") for t, k in cell.keys.items()}
    verdict = timed(
        phases,
        "diff+label",
        lambda: arb.label_run(cell.initial_rows, final, cell.spec, volatile, pks, arb.RunMeta()),
    )
    line = json.dumps({"run": i, "outcome": verdict.outcome, "deltas": len(verdict.damage.deltas)})
    timed(phases, "ledger", lambda: (out.write(line + "\n"), out.flush()))
    return phases


def floor_run(cell: Cell) -> Timer:
    """Deserialize the world's image, read the changed rows by key, serialize it."""
    start = time.perf_counter()
    conn = sqlite3.connect(":memory:")
    conn.deserialize(cell.final_image)
    for sql, key in cell.changed:
        conn.execute(sql, key).fetchone()
    conn.serialize()
    conn.close()
    return {"floor": (time.perf_counter() - start) * 1000.0}


def damage_script(task: Task) -> Script | None:
    """The first counterexample declared to damage, if the task has one."""
    return next((s for s in task.counterexamples if s.expected.outcome == "FAIL_DAMAGE"), None)


def published_severity(rule: dict[str, Any]) -> dict[str, Any]:
    """AgentRelBench's labeler knows LOW..HIGH; CRITICAL is priced as its HIGH (same work)."""
    return rule | ({"severity": "HIGH"} if rule.get("severity") == "CRITICAL" else {})


def changed_rows(initial: bytes, final: bytes) -> list[RowRead]:
    """A keyed SELECT for every row the full diff (nothing masked) says the run changed."""
    reads = []
    for change in diff_images(initial, final, fast=False):
        if change.op == "schema":
            continue
        where = " AND ".join(f"{quote(column)} IS ?" for column, _ in change.key)
        values = tuple(value for _, value in change.key)
        reads.append((f"SELECT * FROM {quote(change.table)} WHERE {where}", values))
    return reads


def reference_final(suite: Suite, task: Task, script: Script) -> bytes:
    """The final image of one run of `script`, for the floor's image and changed rows."""
    substrate = suite.substrate(task)
    sandbox = substrate.seed("floor")
    try:
        apply_script(task, script, substrate, sandbox)
        return sandbox.dump().image
    finally:
        sandbox.close()


def cells_of(suite: Suite, tasks: list[Task], ledger: Ledger, keep_dumps: bool) -> list[Cell]:
    cells = []
    for task in tasks:
        substrate = suite.substrate(task)
        template: StateDump = substrate.template
        plain = StateDump.of(without_capture(template.image))
        conn = sqlite3.connect(":memory:")
        conn.deserialize(plain.image)
        keys = {name: t.primary_key for name, t in read_schema(conn).tables.items()}
        initial_rows = select_all(conn, keys)  # once per task, reused by every run
        conn.close()
        spec = arb.DamageSpec.from_task(
            [r.model_dump(exclude_none=True) for r in task.damage.allowed],
            [published_severity(r.model_dump(exclude_none=True)) for r in task.damage.pricing],
            task.params,
        )
        oracle = task.scripts()[0]
        for script in (oracle, damage_script(task)):
            if script is None:
                continue
            agent = ScriptedAgent(script=script)
            work = RunWork(suite, {agent.name: agent}, {task.id: task}, keep_dumps)
            final = reference_final(suite, task, script)
            cells.append(
                Cell(task, script, substrate, plain, keys, initial_rows, spec,
                     CampaignRunner(work, ledger, None), final,
                     changed_rows(template.image, final))
            )  # fmt: skip
    return cells


def total(phases: Timer) -> float:
    return sum(phases.values())


Side = dict[int, list[Timer]]


def measure(
    cells: list[Cell], runs: int, ledger: Ledger, out: TextIO, grouped: bool = False
) -> tuple[Side, Side, Side]:
    """Every cell `runs` times on each side, the sides' order rotating run by run.

    `grouped`: each side runs a cell's runs back to back instead (warm caches, as a
    campaign of one cell would), the sides of a cell one after another.
    """
    kaudit: Side = {}
    baseline: Side = {}
    floor: Side = {}
    loop = asyncio.new_event_loop()

    def one(side: int, c: int, cell: Cell, i: int) -> None:
        if side == 0:
            kaudit.setdefault(c, []).append(kaudit_run(cell, ledger, loop, i))
        elif side == 1:
            baseline.setdefault(c, []).append(baseline_run(cell, out, i))
        else:
            floor.setdefault(c, []).append(floor_run(cell))

    try:
        if grouped:
            for c, cell in enumerate(cells):
                for side in range(3):
                    for i in range(runs):
                        one(side, c, cell, i)
            return kaudit, baseline, floor
        for i in range(runs):
            for c, cell in enumerate(cells):
                for k in range(3):
                    one((i + c + k) % 3, c, cell, i)  # rotate who runs on a warm cache
    finally:
        loop.close()
    return kaudit, baseline, floor


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10, help="Runs per (task, script) and side.")
    parser.add_argument("--suite", default="builtin")
    parser.add_argument("--task", default=None, help="One task only (default: every task).")
    parser.add_argument(
        "--keep-dumps", action="store_true", help="kaudit keeps every final image in the ledger."
    )
    parser.add_argument(
        "--grouped",
        action="store_true",
        help="Each side runs a cell's runs back to back (warm) instead of interleaved.",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    suite = load_suite(args.suite)
    tasks = [suite.tasks[args.task]] if args.task else list(suite.tasks.values())
    with (
        tempfile.TemporaryDirectory() as tmp,
        Ledger(Path(tmp) / "bench.sqlite") as ledger,
        open(Path(tmp) / "verdicts.jsonl", "w") as out,
    ):
        ledger.open_campaign(CAMPAIGN, {})
        cells = cells_of(suite, tasks, ledger, args.keep_dumps)
        # The baseline's parsed initial states (every row of every task as dicts) stay
        # alive all along; frozen out of the collector, its full passes no longer walk
        # them in whichever side happens to be running. Both sides keep the collector.
        gc.collect()
        gc.freeze()
        kaudit, baseline, floor = measure(cells, args.runs, ledger, out, args.grouped)
        recorded = walk_chain(ledger).records
    summary = summarize(cells, tasks, kaudit, baseline, floor)
    summary |= {
        "runs": args.runs,
        "keep_dumps": args.keep_dumps,
        "grouped": args.grouped,
        "ledger_records": recorded,
    }
    report(summary)
    if args.json:
        print(json.dumps(summary))


def summarize(
    cells: list[Cell], tasks: list[Task], kaudit: Side, baseline: Side, floor: Side
) -> dict[str, Any]:
    per_cell: list[dict[str, Any]] = []
    times: list[tuple[float, float, float]] = []
    vs_tools: list[float] = []
    for c, cell in enumerate(cells):
        k_ms = statistics.median(total(p) for p in kaudit[c])
        b_ms = statistics.median(total(p) for p in baseline[c])
        f_ms = statistics.median(total(p) for p in floor[c])
        ft_ms = f_ms + statistics.median(p["tools"] for p in baseline[c])
        times.append((k_ms, b_ms, f_ms))
        vs_tools.append(k_ms / ft_ms)
        per_cell.append(
            {"task": cell.task.id, "script": cell.script.name, "kaudit_ms": k_ms,
             "baseline_ms": b_ms, "floor_ms": f_ms, "floor_with_tools_ms": ft_ms,
             "ratio": k_ms / b_ms, "ratio_vs_floor": k_ms / f_ms,
             "ratio_vs_floor_with_tools": k_ms / ft_ms, "changed_rows": len(cell.changed)}
        )  # fmt: skip
    rows = sum(len(r) for r in cells[0].initial_rows.values())
    ratios = [k / b for k, b, _ in times]
    vs_floor = [k / f for k, _, f in times]
    by_task: dict[str, list[float]] = {}
    for cell, (k, b, _) in zip(cells, times, strict=True):
        sums = by_task.setdefault(cell.task.id, [0.0, 0.0])
        sums[0], sums[1] = sums[0] + k, sums[1] + b
    return {
        "kaudit_ms": statistics.median(k for k, _, _ in times),
        "baseline_ms": statistics.median(b for _, b, _ in times),
        "floor_ms": statistics.median(f for _, _, f in times),
        "ratio": statistics.median(ratios),
        "ratio_max": max(ratios),
        "ratio_over_tasks": statistics.median(k / b for k, b in by_task.values()),
        "ratio_vs_floor": statistics.median(vs_floor),
        "ratio_vs_floor_max": max(vs_floor),
        "ratio_vs_floor_with_tools": statistics.median(vs_tools),
        "ratio_vs_floor_with_tools_max": max(vs_tools),
        "worst_vs_floor": _worst(per_cell, "ratio_vs_floor"),
        "kaudit_phases_ms": phase_medians(kaudit),
        "baseline_phases_ms": phase_medians(baseline),
        "rows": rows,
        "image_bytes": len(cells[0].final_image),
        "tables": len(cells[0].keys),
        "tasks": len(tasks),
        "cells": len(cells),
        "damage_cells": sum(c.script.name != "oracle" for c in cells),
        "per_cell": per_cell,
    }


def _worst(per_cell: list[dict[str, Any]], ratio: str) -> dict[str, Any]:
    """The cell with the highest `ratio`: which run it is and how many rows it changed."""
    cell = max(per_cell, key=lambda c: c[ratio])
    return {k: cell[k] for k in ("task", "script", "kaudit_ms", "floor_ms", ratio,
                                 "changed_rows")}  # fmt: skip


def phase_medians(runs: Side) -> dict[str, float]:
    return {
        phase: statistics.median(p.get(phase, 0.0) for timers in runs.values() for p in timers)
        for phase in PHASES
    }


def report(s: dict[str, Any]) -> None:
    print(
        f"{s['tasks']} tasks, {s['cells']} (task, script) cells ({s['damage_cells']} damage "
        f"runs), {s['runs']} runs each side; world {s['rows']} rows in {s['tables']} tables, "
        f"{s['image_bytes'] / 1e6:.1f} MB image"
        + ("; kaudit keeps dumps" if s["keep_dumps"] else "")
    )
    print(f"{'phase (median over all runs, ms)':<34}{'kaudit':>10}{'baseline':>10}")
    for phase in PHASES:
        k, b = s["kaudit_phases_ms"][phase], s["baseline_phases_ms"][phase]
        print(f"{phase:<34}{k:>10.3f}{b:>10.3f}")
    print(
        f"{'total (median over cells)':<34}{s['kaudit_ms']:>10.3f}{s['baseline_ms']:>10.3f}   "
        f"ratio kaudit/baseline = {s['ratio']:.3f} (median over cells; worst {s['ratio_max']:.3f})"
    )
    print(
        f"{'floor (median over cells)':<34}{s['floor_ms']:>10.3f}{'':>10}   "
        f"ratio kaudit/floor = {s['ratio_vs_floor']:.2f} (median over cells; "
        f"worst {s['ratio_vs_floor_max']:.2f})"
    )
    worst = s["worst_vs_floor"]
    print(
        f"{'':<44}   worst against the floor: {worst['task']} {worst['script']} "
        f"({worst['changed_rows']} rows changed)"
    )
    print(
        f"{'':<44}   ratio kaudit/(floor+tools) = {s['ratio_vs_floor_with_tools']:.2f} "
        f"(median over cells; worst {s['ratio_vs_floor_with_tools_max']:.2f})"
    )
    print(
        f"per task (clean + damage run): median ratio {s['ratio_over_tasks']:.3f} "
        f"over {s['tasks']} tasks"
    )
    unchanged = [c for c in s["per_cell"] if c["changed_rows"] == 0]
    if unchanged:
        print("runs that change no row (ms): kaudit, floor, the baseline's bare tool calls")
        for c in sorted(unchanged, key=lambda c: -c["ratio_vs_floor"]):
            tools = c["floor_with_tools_ms"] - c["floor_ms"]
            print(
                f"  {c['task'] + ' ' + c['script']:<41}{c['kaudit_ms']:>7.3f}{c['floor_ms']:>7.3f}"
                f"{tools:>7.3f}   kaudit/floor {c['ratio_vs_floor']:.2f}, tools/floor "
                f"{tools / c['floor_ms']:.2f}, kaudit/(floor+tools) "
                f"{c['ratio_vs_floor_with_tools']:.2f}"
            )


if __name__ == "__main__":
    main()
