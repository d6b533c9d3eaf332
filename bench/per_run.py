"""Per-run harness overhead, kaudit beside the published AgentRelBench pipeline.

Both sides label the same sandboxes after the same oracle tool calls. kaudit:
seed from template bytes, snapshot with `serialize()`, diff inside SQLite via the
change log, label, append to the hash-chained ledger. Baseline: the same seed,
then `SELECT *` of every table into dicts before and after (the published way),
`agentrelbench.labeler.label_run` called as a library, a JSON line appended.
Medians per phase; `ratio` = kaudit_ms / baseline_ms (goal <= 0.1).

    python bench/per_run.py [--runs 200] [--suite builtin] [--task ID] [--json]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentrelbench import labeler as arb

from kaudit.gateway import ToolGateway
from kaudit.label import RunMeta, diff_images, label_run
from kaudit.ledger import Ledger, RunRecord
from kaudit.spec import Task
from kaudit.substrate import Sandbox, SqliteSandbox, Substrate, ToolContext, read_schema
from kaudit.suites import load_suite

Timer = dict[str, list[float]]


def timed(phases: Timer, name: str, fn: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    out = fn()
    phases.setdefault(name, []).append((time.perf_counter() - start) * 1000.0)
    return out


def apply_oracle(task: Task, substrate: Substrate, sandbox: Sandbox) -> None:
    tools = {name: substrate.tools[name] for name in task.tools}
    gateway = ToolGateway(tools, ToolContext(db=sandbox.db))
    for i, step in enumerate(task.oracle):
        for call in step.tool_calls:
            gateway.call(str(i), call.name, dict(call.arguments))


def select_all(
    conn: sqlite3.Connection, keys: dict[str, tuple[str, ...]]
) -> dict[str, list[dict[str, Any]]]:
    """The published dump: every row of every table as a dict; composite keys joined."""
    state: dict[str, list[dict[str, Any]]] = {}
    for table, key in keys.items():
        cursor = conn.execute(f'SELECT * FROM "{table}"')
        names = [c[0] for c in cursor.description]
        rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        if len(key) > 1:
            for row in rows:
                row["__pk"] = tuple(row[c] for c in key)
        state[table] = rows
    return state


def kaudit_run(task: Task, substrate: Substrate, ledger: Ledger, i: int, phases: Timer) -> None:
    sandbox = timed(phases, "seed", lambda: substrate.seed(f"k{i}"))
    apply_oracle(task, substrate, sandbox)
    final = timed(phases, "snapshot", sandbox.dump)
    sandbox.close()
    verdict = timed(
        phases,
        "diff+label",
        lambda: label_run(
            sandbox.initial.image,
            final.image,
            task.damage,
            task.checks,
            task.params,
            RunMeta(),
            volatile=substrate.volatile,
        ),
    )
    # The labeler diffs and labels over one connection; time the diff alone on the side
    # (not in the total) so the split is visible.
    timed(
        phases,
        "(diff alone)",
        lambda: diff_images(sandbox.initial.image, final.image, substrate.volatile),
    )
    record = RunRecord(
        campaign="bench",
        model="m",
        task=task.id,
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
    timed(phases, "ledger", lambda: ledger.append(record))


def baseline_run(
    task: Task,
    substrate: Substrate,
    out: Any,
    i: int,
    phases: Timer,
    keys: dict[str, tuple[str, ...]],
) -> None:
    sandbox: SqliteSandbox = timed(phases, "seed", lambda: substrate.seed(f"b{i}"))  # type: ignore[arg-type]
    conn = sandbox._conn
    initial = timed(phases, "snapshot", lambda: select_all(conn, keys))
    apply_oracle(task, substrate, sandbox)
    final = timed(phases, "snapshot", lambda: select_all(conn, keys))
    sandbox.close()
    spec = arb.DamageSpec.from_task(
        [r.model_dump(exclude_none=True) for r in task.damage.allowed],
        [r.model_dump(exclude_none=True) for r in task.damage.pricing],
        task.params,
    )
    volatile = {t: list(c) for t, c in substrate.volatile.items()}
    pks = {t: (k[0] if len(k) == 1 else "__pk") for t, k in keys.items()}
    verdict = timed(
        phases,
        "diff+label",
        lambda: arb.label_run(initial, final, spec, volatile, pks, arb.RunMeta()),
    )
    line = json.dumps({"run": i, "outcome": verdict.outcome, "deltas": len(verdict.damage.deltas)})
    timed(phases, "ledger", lambda: (out.write(line + "\n"), out.flush()))


def median_total(phases: Timer, runs: int) -> float:
    totals = [
        sum(
            values[i] if len(values) == runs else values[2 * i] + values[2 * i + 1]
            for values in phases.values()
        )
        for i in range(runs)
    ]
    return statistics.median(totals)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--suite", default="builtin")
    parser.add_argument("--task", default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    suite = load_suite(args.suite)
    task = suite.tasks[args.task] if args.task else next(iter(suite.tasks.values()))
    substrate = suite.substrate(task)
    conn = sqlite3.connect(":memory:")
    conn.deserialize(substrate.template.image)  # type: ignore[attr-defined]
    schema = read_schema(conn)
    keys = {name: t.primary_key for name, t in schema.tables.items()}
    rows = sum(conn.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()[0] for name in keys)
    kaudit: Timer = {}
    baseline: Timer = {}
    with (
        tempfile.TemporaryDirectory() as tmp,
        Ledger(Path(tmp) / "bench.sqlite") as ledger,
        open(Path(tmp) / "verdicts.jsonl", "w") as out,
    ):
        for i in range(args.runs):  # interleaved so both sides see the same machine state
            kaudit_run(task, substrate, ledger, i, kaudit)
            baseline_run(task, substrate, out, i, baseline, keys)
    side = {"(diff alone)": kaudit.pop("(diff alone)")}
    k_ms, b_ms = median_total(kaudit, args.runs), median_total(baseline, args.runs)
    print(
        f"task {task.id}: {rows} rows in {len(keys)} tables, {args.runs} runs each, medians in ms"
    )
    print(f"{'phase':<12}{'kaudit':>10}{'baseline':>10}")
    for phase in ("seed", "snapshot", "diff+label", "ledger"):
        k_phase = statistics.median(kaudit[phase])
        b_values = baseline[phase]
        b_phase = statistics.median(
            b_values
            if len(b_values) == args.runs
            else [b_values[2 * i] + b_values[2 * i + 1] for i in range(args.runs)]
        )
        print(f"{phase:<12}{k_phase:>10.3f}{b_phase:>10.3f}")
    print(f"{'total':<12}{k_ms:>10.3f}{b_ms:>10.3f}   ratio kaudit/baseline = {k_ms / b_ms:.3f}")
    diff_ms = statistics.median(side["(diff alone)"])
    print(f"of kaudit's diff+label, the diff alone takes {diff_ms:.3f} ms (measured separately)")
    if args.json:
        print(
            json.dumps(
                {
                    "kaudit_ms": k_ms,
                    "baseline_ms": b_ms,
                    "ratio": k_ms / b_ms,
                    "kaudit_phases_ms": {p: statistics.median(v) for p, v in kaudit.items()},
                    "kaudit_diff_alone_ms": diff_ms,
                    "rows": rows,
                    "tables": len(keys),
                    "runs": args.runs,
                    "task": task.id,
                }
            )
        )


if __name__ == "__main__":
    main()
