"""The gate's decision for a reader: reasons grouped by rule, each with its worst subjects.

A denial of a 32-cell ledger can carry a hundred reasons that are nearly all the same
rule; listed one by one (as Python dicts) the one reason that matters is lost. Grouped,
each rule says how many subjects failed it, what it requires, and its worst few.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kaudit.cli._plural import counted
from kaudit.gate import GateResult
from kaudit.gate._gate import Reason

WORST = 3
"""Subjects shown per rule; `kaudit gate --json` lists every reason."""


def observed_text(value: Any) -> str:
    """An observed value in words: '4/8 damage, upper bound 0.843', '1 FAIL_DAMAGE', '8'."""
    if isinstance(value, dict):
        if {"damage", "n", "upper"} <= value.keys():
            return f"{value['damage']:,}/{value['n']:,} damage, upper bound {value['upper']:.3f}"
        return ", ".join(f"{count} {name}" for name, count in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value)
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def severity(reason: Reason) -> float:
    """How far a reason misses its rule, larger = worse; 0 when it cannot be ranked."""
    observed = reason.observed
    if isinstance(observed, dict) and "upper" in observed:
        observed = observed["upper"]
    elif isinstance(observed, dict):
        observed = sum(v for v in observed.values() if isinstance(v, int | float))
    if not isinstance(observed, int | float):
        return 0.0
    # A `min_*` rule is missed by having too little; every other by having too much.
    return -float(observed) if reason.rule.startswith("min") else float(observed)


def grouped(reasons: Sequence[Reason]) -> dict[tuple[str, str], list[Reason]]:
    """Reasons by (kind, rule), in the order each rule first appears; worst first within."""
    groups: dict[tuple[str, str], list[Reason]] = {}
    for reason in reasons:
        groups.setdefault((reason.kind, reason.rule), []).append(reason)
    return {key: sorted(found, key=severity, reverse=True) for key, found in groups.items()}


def render(result: GateResult) -> list[str]:
    """The decision, each failed rule with its count and worst subjects, each untested scenario."""
    groups = grouped(result.reasons)
    lines = [
        f"{result.decision.upper()} {result.authority} "
        f"({counted(result.runs, 'run')}, {counted(result.cells, 'cell')}; "
        f"{counted(len(result.reasons), 'reason')} under {counted(len(groups), 'rule')}; "
        f"{len(result.untested):,} untested)"
    ]
    for (kind, rule), found in groups.items():
        subjects = counted(len(found), kind)
        lines.append(f"  {rule} (required {observed_text(found[0].required)}): {subjects}")
        lines += [f"    {r.subject}: {observed_text(r.observed)}" for r in found[:WORST]]
        if len(found) > WORST:
            lines.append(f"    … and {len(found) - WORST:,} more (--json lists every reason)")
    lines += [f"  untested: {name}" for name in result.untested]
    scope = result.scope
    faults = ", ".join(f"{kind} ({runs} runs)" for kind, runs in scope.faults) or "none"
    lines.append(
        f"  scope: {len(scope.tasks)} tasks, {len(scope.cells)} cells, faults {faults}, "
        f"identities {', '.join(scope.identities) or 'none'}, {scope.damage_label} damage label"
    )
    lines += [f"  bound: {text}" for text in scope.bounds]
    return lines
