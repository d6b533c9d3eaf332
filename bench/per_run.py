"""Per-run harness overhead, kaudit beside the published AgentRelBench pipeline.

For every task of the suite, two scripted runs are timed on both sides: the oracle (a
clean run) and the first counterexample that damages (a damage run). Both sides seed
the same way, then make the same tool calls; each side's own costs are timed:

- kaudit: the tool calls on a template carrying the change-capture triggers (their cost
  per write is counted here), `serialize()` of the final state, the diff via the change
  log plus labeling (checks included), and the ledger: the run's claim and the
  hash-chained append.
- baseline: the tool calls on the same template without triggers, `SELECT *` of every
  table into dicts after the run (the initial state's dump is taken once per task and
  reused, as kaudit reuses its parsed template), `agentrelbench.labeler.label_run`
  called as a library, a JSON line appended.

The two sides alternate which goes first on every run. Per (task, script) the median
total of each side is taken; `ratio` is the median over those cells of kaudit / baseline
(goal <= 0.1), `ratio_max` the worst cell, `ratio_over_tasks` the median over tasks of
the ratio of a task's clean plus damage run.

    python bench/per_run.py [--runs 10] [--suite builtin] [--task ID] [--json]
"""

from __future__ import annotations

import argparse
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

from kaudit.label import RunMeta, label_run
from kaudit.ledger import Ledger, RunRecord
from kaudit.spec import Script, Task
from kaudit.substrate import (
    CHANGE_LOG,
    Sandbox,
    SqliteSandbox,
    StateDump,
    Substrate,
    ToolContext,
    quote,
    read_schema,
)
from kaudit.suites import Suite, load_suite

PHASES = ("seed", "tools", "snapshot", "diff+label", "ledger")
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


@dataclass
class Cell:
    """One (task, script) pair and everything both sides reuse across its runs."""

    task: Task
    script: Script
    substrate: Substrate
    plain: StateDump
    keys: dict[str, tuple[str, ...]]
    initial_rows: dict[str, list[dict[str, Any]]]
    spec: Any


def kaudit_run(cell: Cell, ledger: Ledger, i: int) -> Timer:
    phases: Timer = {}
    task = cell.task
    key = ("bench", "m", f"{task.id}:{cell.script.name}", i)
    sandbox = timed(phases, "seed", lambda: cell.substrate.seed(f"k{i}"))
    timed(phases, "tools", lambda: apply_script(task, cell.script, cell.substrate, sandbox))
    final = timed(phases, "snapshot", sandbox.dump)
    sandbox.close()
    meta = RunMeta(refusal_token=task.refusal_token)
    verdict = timed(
        phases,
        "diff+label",
        lambda: label_run(
            sandbox.initial.image, final.image, task.damage, task.checks, task.params, meta,
            volatile=cell.substrate.volatile,
        ),
    )  # fmt: skip

    def record() -> None:
        ledger.claim(key)
        ledger.append(
            RunRecord(
                campaign=key[0],
                model=key[1],
                task=key[2],
                run_index=i,
                seed=i,
                status="labeled",
                outcome=verdict.outcome,
                counts_as_damage=verdict.counts_as_damage,
                success=verdict.success,
                verdict=verdict.to_json(),
                initial_digest=sandbox.initial.digest,
                final_digest=final.digest,
            )
        )

    timed(phases, "ledger", record)
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


def damage_script(task: Task) -> Script | None:
    """The first counterexample declared to damage, if the task has one."""
    return next((s for s in task.counterexamples if s.expected.outcome == "FAIL_DAMAGE"), None)


def published_severity(rule: dict[str, Any]) -> dict[str, Any]:
    """AgentRelBench's labeler knows LOW..HIGH; CRITICAL is priced as its HIGH (same work)."""
    return rule | ({"severity": "HIGH"} if rule.get("severity") == "CRITICAL" else {})


def cells_of(suite: Suite, tasks: list[Task]) -> list[Cell]:
    cells = []
    for task in tasks:
        substrate = suite.substrate(task)
        template: StateDump = substrate.template  # type: ignore[attr-defined]
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
            if script is not None:
                cells.append(Cell(task, script, substrate, plain, keys, initial_rows, spec))
    return cells


def total(phases: Timer) -> float:
    return sum(phases.values())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10, help="Runs per (task, script) and side.")
    parser.add_argument("--suite", default="builtin")
    parser.add_argument("--task", default=None, help="One task only (default: every task).")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    suite = load_suite(args.suite)
    tasks = [suite.tasks[args.task]] if args.task else list(suite.tasks.values())
    cells = cells_of(suite, tasks)
    kaudit: dict[int, list[Timer]] = {}
    baseline: dict[int, list[Timer]] = {}
    with (
        tempfile.TemporaryDirectory() as tmp,
        Ledger(Path(tmp) / "bench.sqlite") as ledger,
        open(Path(tmp) / "verdicts.jsonl", "w") as out,
    ):
        ledger.open_campaign("bench", {})
        for i in range(args.runs):
            for c, cell in enumerate(cells):
                kaudit_first = (i + c) % 2 == 0  # alternate who runs on a warm cache
                if kaudit_first:
                    kaudit.setdefault(c, []).append(kaudit_run(cell, ledger, i))
                baseline.setdefault(c, []).append(baseline_run(cell, out, i))
                if not kaudit_first:
                    kaudit.setdefault(c, []).append(kaudit_run(cell, ledger, i))
    per_cell: list[dict[str, Any]] = []
    times: list[tuple[float, float]] = []
    for c, cell in enumerate(cells):
        k_ms = statistics.median(total(p) for p in kaudit[c])
        b_ms = statistics.median(total(p) for p in baseline[c])
        times.append((k_ms, b_ms))
        per_cell.append(
            {"task": cell.task.id, "script": cell.script.name, "kaudit_ms": k_ms,
             "baseline_ms": b_ms, "ratio": k_ms / b_ms}
        )  # fmt: skip
    rows = sum(len(r) for r in cells[0].initial_rows.values())
    ratios = [k / b for k, b in times]
    by_task: dict[str, list[float]] = {}
    for cell, (k, b) in zip(cells, times, strict=True):
        sums = by_task.setdefault(cell.task.id, [0.0, 0.0])
        sums[0], sums[1] = sums[0] + k, sums[1] + b
    summary = {
        "kaudit_ms": statistics.median(k for k, _ in times),
        "baseline_ms": statistics.median(b for _, b in times),
        "ratio": statistics.median(ratios),
        "ratio_max": max(ratios),
        "ratio_over_tasks": statistics.median(k / b for k, b in by_task.values()),
        "kaudit_phases_ms": phase_medians(kaudit),
        "baseline_phases_ms": phase_medians(baseline),
        "rows": rows,
        "tables": len(cells[0].keys),
        "tasks": len(tasks),
        "cells": len(cells),
        "damage_cells": sum(c.script.name != "oracle" for c in cells),
        "runs": args.runs,
        "per_cell": per_cell,
    }
    report(summary)
    if args.json:
        print(json.dumps(summary))


def phase_medians(runs: dict[int, list[Timer]]) -> dict[str, float]:
    return {
        phase: statistics.median(p.get(phase, 0.0) for timers in runs.values() for p in timers)
        for phase in PHASES
    }


def report(s: dict[str, Any]) -> None:
    print(
        f"{s['tasks']} tasks, {s['cells']} (task, script) cells ({s['damage_cells']} damage "
        f"runs), {s['runs']} runs each side; world {s['rows']} rows in {s['tables']} tables"
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
        f"per task (clean + damage run): median ratio {s['ratio_over_tasks']:.3f} "
        f"over {s['tasks']} tasks"
    )


if __name__ == "__main__":
    main()
