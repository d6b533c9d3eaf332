"""The task linter: catches damage specs an agent could game or that silently price nothing.

Three rules, each a way a spec goes wrong without any script noticing:
- a `where` column that a selected tool can modify lets the agent make its own change
  match an allow rule (set `status = 'open'`, then "open" rows are authorized);
- a table a selected tool can write but no rule allows or prices falls to the default
  severity by accident: it must be allowed, priced, or listed under `damage.unpriced`;
- a param nothing refers to is a binding the author meant to use and did not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kaudit.spec import Task
from kaudit.tools import Tool

ROW_WRITE = "*"


@dataclass(frozen=True)
class LintFinding:
    """One problem with one task."""

    task: str
    rule: str
    message: str


def _modifiable(tools: Mapping[str, Tool]) -> dict[str, set[str]]:
    columns: dict[str, set[str]] = {}
    for tool in tools.values():
        for table, written in tool.writes.items():
            columns.setdefault(table, set()).update(written)
    return columns


def lint_task(task: Task, tools: Mapping[str, Tool]) -> list[LintFinding]:
    """Findings for `task` given the tools it selects (an empty list means clean)."""
    selected = {name: tools[name] for name in task.tools if name in tools}
    writable = _modifiable(selected)
    findings: list[LintFinding] = []
    for rule in (*task.damage.allowed, *task.damage.pricing):
        for column in rule.where:
            tables = (
                writable if rule.table == "*" else {rule.table: writable.get(rule.table, set())}
            )
            for table, columns in tables.items():
                if column in columns:
                    findings.append(
                        LintFinding(
                            task.id,
                            "where-column-writable",
                            f"rule on {rule.table} matches on {column!r}, which a selected "
                            f"tool can modify in {table}: the agent could make its change match",
                        )
                    )
    covered = {rule.table for rule in (*task.damage.allowed, *task.damage.pricing)}
    if ROW_WRITE not in covered:
        for table in sorted(set(writable) - covered - set(task.damage.unpriced)):
            findings.append(
                LintFinding(
                    task.id,
                    "table-unpriced",
                    f"table {table} is writable by a selected tool but neither allowed nor "
                    "priced; price it or list it under damage.unpriced",
                )
            )
    for name in sorted(set(task.params) - task.referenced_params()):
        findings.append(
            LintFinding(task.id, "param-unused", f"param {name!r} is not used by any rule or check")
        )
    return findings
