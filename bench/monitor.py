"""Monitoring overhead: labeling one production transaction, and judging one event.

capture: `watch_transaction` (temporary triggers copy only the touched rows; the
labeler diffs two small images) beside the obvious baseline, `serialize()` of the whole
database before and after the same transaction and the labeler's full diff of the two
images. Both run on a file copy of the built-in 11,809-row enterprise world (kaudit's
own change-capture triggers removed, as a production database would not have them),
on a transaction that updates one row in each of three tables; both give the same
deltas (checked here). observe: `Monitor.observe` per event over a seeded stream.

    python bench/monitor.py [--repeats 50] [--events 20000] [--json]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from kaudit.label import RunMeta, label_run
from kaudit.monitor import Event, Monitor, watch_transaction
from kaudit.monitor._audit import AuditCell
from kaudit.spec import Task
from kaudit.substrate import quote, read_schema
from kaudit.suites import load_suite
from kaudit.worlds._world import get_world

TASK = "billing/refund-approval-limit"


def production_copy(path: Path) -> sqlite3.Connection:
    """The enterprise world as a plain SQLite file, without kaudit's audit-time triggers."""
    world = get_world("enterprise")
    conn = sqlite3.connect(path)
    conn.deserialize(world.substrate().template.image)
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        conn.execute(f"DROP TRIGGER {quote(name)}")
    internal = "name LIKE '\\_kaudit\\_%' ESCAPE '\\'"
    for (name,) in conn.execute(
        f"SELECT name FROM sqlite_master WHERE type = 'table' AND {internal}"
    ).fetchall():
        conn.execute(f"DROP TABLE {quote(name)}")
    conn.commit()
    return conn


def statements(conn: sqlite3.Connection) -> list[str]:
    """One UPDATE for the first row of each of the three largest tables, built once."""
    schema = read_schema(conn)
    sizes = sorted(
        (
            (conn.execute(f"SELECT COUNT(*) FROM {quote(t)}").fetchone()[0], t)
            for t in schema.tables
        ),
        reverse=True,
    )
    found = []
    for _, name in sizes[:3]:
        table = schema.tables[name]
        column = next(c for c in table.columns if c not in table.primary_key)
        first = f"(SELECT MIN(rowid) FROM {quote(name)})"
        found.append(f"UPDATE {quote(name)} SET {quote(column)} = ? WHERE rowid = {first}")
    return found


def transaction(conn: sqlite3.Connection, updates: list[str], round_: int) -> None:
    """Touch one row in each of the three tables (a new value every round)."""
    for sql in updates:
        conn.execute(sql, (f"bench-{round_}",))


def capture(task: Task, conn: sqlite3.Connection, repeats: int) -> tuple[list[float], list[float]]:
    volatile = get_world("enterprise").volatile
    updates = statements(conn)
    watched: list[float] = []
    whole: list[float] = []
    for i in range(repeats):
        start = time.perf_counter()
        with watch_transaction(conn, task, model="bench", volatile=volatile) as watch:
            transaction(conn, updates, 2 * i)
        watched.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        before = conn.serialize()
        conn.execute("BEGIN")
        transaction(conn, updates, 2 * i + 1)
        conn.commit()
        verdict = label_run(
            before, conn.serialize(), task.damage, (), task.params, RunMeta(),
            volatile=volatile, fast=False,
        )  # fmt: skip
        whole.append((time.perf_counter() - start) * 1000)
        assert watch.verdict is not None
        assert [(d.table, d.key) for d in watch.verdict.deltas] == [
            (d.table, d.key) for d in verdict.deltas
        ]
    return watched, whole


def observe(events: int) -> float:
    rng = np.random.default_rng(0)
    audit = {("m", "t"): AuditCell(60, 6, 0.1, 0.038, 0.205, "CP")}
    monitor = Monitor(audit, threshold=0.2)
    harm = rng.random(events) < 0.1
    seen = rng.random(events) >= 0.2
    stream = [Event("t", "m", bool(h) if s else None) for h, s in zip(harm, seen, strict=True)]
    start = time.perf_counter()
    for event in stream:
        monitor.observe(event)
    return (time.perf_counter() - start) * 1000 / events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    task = load_suite("builtin").tasks[TASK]
    with tempfile.TemporaryDirectory(prefix="kaudit_bench_monitor_") as directory:
        conn = production_copy(Path(directory) / "prod.sqlite")
        rows = sum(
            conn.execute(f"SELECT COUNT(*) FROM {quote(t)}").fetchone()[0]
            for t in read_schema(conn).tables
        )
        watched, whole = capture(task, conn, args.repeats)
        conn.close()
    per_event = observe(args.events)
    result = {
        "rows": rows,
        "capture_ms": statistics.median(watched),
        "whole_image_ms": statistics.median(whole),
        "ratio": statistics.median(watched) / statistics.median(whole),
        "observe_ms_per_event": per_event,
        "events": args.events,
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"{rows} rows, {args.repeats} transactions, medians in ms")
    print(f"watch_transaction   {result['capture_ms']:8.3f}")
    print(f"whole-image label   {result['whole_image_ms']:8.3f}   ratio {result['ratio']:.3f}")
    print(f"Monitor.observe     {per_event:8.4f} per event over {args.events} events")


if __name__ == "__main__":
    main()
