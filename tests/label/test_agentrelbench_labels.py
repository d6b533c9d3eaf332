"""kaudit's labeler against `agentrelbench.labeler.label_run` on the 20 published tasks.

For each task, random final states are made from its seeded world: rows of the tables
its damage spec names (and of one other table) are updated, deleted or copied under a
new key, and the rows its allow rules cover get their permitted columns changed, so
PASS, FAIL_SAFE and FAIL_DAMAGE states all occur. Both labelers judge the same pair of
states; outcome, sub-label, severity, dollars and the number of deltas must agree. The
reference is the installed package, loaded from the published task folders.
"""

from __future__ import annotations

import json
import random
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from agentrelbench import labeler as arb
from agentrelbench import labeling as arb_files

from kaudit.label import RunMeta, label_run
from kaudit.spec import Task
from kaudit.substrate import quote, read_schema
from kaudit.suites import Suite, load_suite
from kaudit.tools import ToolContext
from tests.stats.arb_data import suite_root

STATES_PER_TASK = 6

pytestmark = pytest.mark.agentrelbench


@pytest.fixture(scope="module")
def published() -> tuple[Path, Suite]:
    root = suite_root()
    return root, load_suite(f"agentrelbench:{root / 'tasks'}")


def rows_of(conn: sqlite3.Connection, tables: list[str]) -> dict[str, list[dict[str, Any]]]:
    state = {}
    for table in tables:
        cursor = conn.execute(f"SELECT * FROM {quote(table)}")
        names = [c[0] for c in cursor.description]
        state[table] = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    return state


def mutate(conn: sqlite3.Connection, task: Task, rnd: random.Random, known: set[str]) -> None:
    """A few random writes, biased to the tables and rows the task's rules talk about.

    Only tables in the published primary-key registry (`known`) are written: the
    reference refuses to label a state with changes anywhere else.
    """
    schema = read_schema(conn)
    named = sorted({r.table for r in (*task.damage.allowed, *task.damage.pricing)} & known)
    tables = [*named, rnd.choice(sorted(known & set(schema.tables)))]
    for _ in range(rnd.randint(0, 4)):
        table = schema.tables[rnd.choice(tables)]
        rowids = [r for (r,) in conn.execute(f"SELECT rowid FROM {quote(table.name)}")]
        if not rowids:
            continue
        rowid, kind = rnd.choice(rowids), rnd.choice(["update", "delete", "copy", "allowed"])
        others = [c for c in table.columns if c not in table.primary_key]
        if kind == "update" and others:
            column = rnd.choice(others)
            donor = rnd.choice(rowids)
            name, col = quote(table.name), quote(column)
            conn.execute(
                f"UPDATE {name} SET {col} = (SELECT {col} FROM {name} WHERE rowid = ?) "
                "WHERE rowid = ?",
                (donor, rowid),
            )
        elif kind == "delete":
            conn.execute(f"DELETE FROM {quote(table.name)} WHERE rowid = ?", (rowid,))
        elif kind == "copy":
            row = dict(rows_of_one(conn, table.name, rowid))
            for key in table.primary_key:
                row[key] = (
                    f"{row[key]}_copy" if isinstance(row[key], str) else (row[key] or 0) + 10**6
                )
            marks = ", ".join("?" for _ in row)
            conn.execute(
                f"INSERT OR IGNORE INTO {quote(table.name)} ({', '.join(map(quote, row))}) "
                f"VALUES ({marks})",
                tuple(row.values()),
            )
        else:
            allowed_write(conn, task, rnd)


def rows_of_one(conn: sqlite3.Connection, table: str, rowid: int) -> dict[str, Any]:
    cursor = conn.execute(f"SELECT * FROM {quote(table)} WHERE rowid = ?", (rowid,))
    names = [c[0] for c in cursor.description]
    return dict(zip(names, cursor.fetchone(), strict=True))


def allowed_write(conn: sqlite3.Connection, task: Task, rnd: random.Random) -> None:
    """Change a permitted column of a row an allow rule covers (the intended change)."""
    rules = [r for r in task.damage.allowed if r.table != "*" and r.op == "modified" and r.columns]
    if not rules:
        return
    rule = rnd.choice(rules)
    where = rule.bound(task.params)
    clause = " AND ".join(f"{quote(c)} IS ?" for c in where) or "1"
    column = rnd.choice(list(rule.columns or ()))
    value = rnd.choice(["closed", "approved", "resolved", 0, 1, None, "x"])
    conn.execute(
        f"UPDATE {quote(rule.table)} SET {quote(column)} = ? WHERE {clause}",
        (value, *where.values()),
    )


def keyed_tables(image: bytes, keys: dict[str, str]) -> set[str]:
    """Tables whose registry key really identifies a row (unique, never NULL).

    The reference keys rows by that one column; where it is not unique (a composite
    key in the world) it cannot tell rows apart, which is no ordinary state to compare.
    """
    conn = sqlite3.connect(":memory:")
    conn.deserialize(image)
    found = set()
    for table in read_schema(conn).tables:
        if table not in keys:
            continue
        key = quote(keys[table])
        total, distinct = conn.execute(
            f"SELECT COUNT(*), COUNT(DISTINCT {key}) FROM {quote(table)}"
        ).fetchone()
        if total == distinct:
            found.add(table)
    conn.close()
    return found


def task_dir(root: Path, task: Task) -> Path:
    name = task.id.split("/")[-1]
    return next(p.parent for p in (root / "tasks").rglob("damage.json") if p.parent.name == name)


def task_domain(root: Path, task: Task) -> str:
    return str(json.loads((task_dir(root, task) / "damage.json").read_text())["domain"])


def reference_verdict(
    root: Path, task: Task, initial: bytes, final: bytes, success: bool
) -> arb.RunVerdict:
    task_dir = next(
        p.parent
        for p in (root / "tasks").rglob("damage.json")
        if p.parent.name == task.id.split("/")[-1]
    )
    task_id = json.loads((task_dir / "damage.json").read_text())["task_id"]
    spec, volatile, keys = arb_files._load_task_damage_spec(
        root / "tasks", root / "data" / "eog", task_id
    )
    states = []
    for image in (initial, final):
        conn = sqlite3.connect(":memory:")
        conn.deserialize(image)
        states.append(rows_of(conn, [t for t in read_schema(conn).tables if t in keys]))
        conn.close()
    meta = arb.RunMeta(termination="completed", final_message=None, eog_success=success)
    return arb.label_run(states[0], states[1], spec, volatile, keys, meta)


def test_labels_equal_the_reference_on_random_states_of_every_published_task(
    published: tuple[Path, Suite],
) -> None:
    """Fails if kaudit and the published labeler disagree on any state; tried by hand:
    an allow rule whose `where` is ignored, and a modified row whose last changed
    column escapes authorization, each break it within the first task."""
    root, suite = published
    outcomes: set[str] = set()
    assert len(suite.tasks) == 20
    for task in suite.tasks.values():
        substrate = suite.substrate(task)
        keys = arb_files._load_primary_keys(root / "data" / "eog", task_domain(root, task))
        sandbox = substrate.seed("differential")
        initial = sandbox.initial.image
        ctx = ToolContext(db=sandbox.db)
        for step in task.oracle:
            for call in step.tool_calls:
                substrate.tools[call.name].call(ctx, dict(call.arguments))
        solved = sandbox.dump().image
        sandbox.close()
        known = keyed_tables(initial, keys)
        for i in range(STATES_PER_TASK):
            conn = sqlite3.connect(":memory:", isolation_level=None)
            conn.deserialize(solved if i % 2 == 0 else initial)  # half start from the oracle's
            conn.execute("PRAGMA recursive_triggers = ON")
            if i > 0:  # state 0 is the oracle's own final state
                mutate(conn, task, random.Random(f"{task.id}/{i}"), known)
            final = conn.serialize()
            conn.close()
            ours = label_run(
                initial, final, task.damage, task.checks, task.params, RunMeta(),
                volatile=substrate.volatile,
            )  # fmt: skip
            theirs = reference_verdict(root, task, initial, final, ours.success)
            where = f"{task.id} state {i}"
            assert (ours.outcome, ours.sub_label) == (theirs.outcome, theirs.sub_label), where
            assert ours.severity == theirs.damage.severity, where
            assert len(ours.deltas) == len(theirs.damage.deltas), where
            if theirs.damage.dollars is None:
                assert ours.dollars is None, where
            else:
                assert ours.dollars == Decimal(repr(theirs.damage.dollars)), where
            outcomes.add(ours.outcome)
    assert outcomes == {"PASS", "FAIL_SAFE", "FAIL_DAMAGE"}
