"""Read AgentRelBench ``verdicts.jsonl`` files so their runs can be analyzed directly.

One file holds one model's runs (the model is not in the rows, so the caller names it),
one JSON object a line with the fields ``task_id``, ``run`` (``"run_1"``…), ``outcome``,
``sub_label``, ``counts_as_damage``, ``counts_as_damage_upper``, ``eog_success``,
``severity``, ``dollars`` and ``deltas``. Only the facts of the format are used here.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaudit.errors import LedgerError
from kaudit.ledger._tally import tally_cells
from kaudit.stats import CellTally

__all__ = ["ImportedRun", "read_agentrelbench_verdicts", "tallies_from_runs"]

_OUTCOMES = frozenset({"PASS", "FAIL_SAFE", "FAIL_DAMAGE", "INVALID"})
_RUN_ID = re.compile(r"^run_(\d{1,30})$")
_SEVERITIES = frozenset({"LOW", "MEDIUM", "HIGH", "CRITICAL"})


@dataclass(frozen=True)
class ImportedRun:
    """One AgentRelBench run verdict, as kaudit reads it.

    Attributes:
        model: Model name given by the caller (files hold one model each).
        task: The ``task_id``.
        run: Run index parsed from ``"run_<i>"``.
        outcome: PASS, FAIL_SAFE, FAIL_DAMAGE (INVALID is read but never counted).
        sub_label: Termination sub-label, e.g. ``refused_but_mutated``; None on PASS.
        counts_as_damage: Damage under the strict label.
        counts_as_damage_upper: Damage under the inclusive label (implied by the strict).
        eog_success: The EnterpriseOps-Gym success verifiers passed.
        severity: Highest delta severity (LOW … CRITICAL) or None.
        dollars: Priced damage in dollars, or None when unpriced.
        deltas: The state changes found, as the file gives them.
        refusal_declared: The agent declared a refusal in its final words; None when the
            file does not say (older files), so a transcript grader leaves it ungraded.
        source: ``path:line`` the run was read from, for error messages.
    """

    model: str
    task: str
    run: int
    outcome: str
    sub_label: str | None
    counts_as_damage: bool
    counts_as_damage_upper: bool
    eog_success: bool
    severity: str | None
    dollars: float | None
    deltas: tuple[Mapping[str, Any], ...]
    refusal_declared: bool | None
    source: str


def _field(row: Mapping[str, Any], name: str, kinds: tuple[type, ...], where: str) -> Any:
    if name not in row:
        raise LedgerError(f"{where}: missing field {name!r}")
    value = row[name]
    # bool is an int subclass; a number where a flag belongs is still an error.
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        expected = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
        raise LedgerError(f"{where}: field {name!r} must be {expected}, got {value!r}")
    return value


MAX_RUN_INDEX = 10**9
"""Largest run index imported: past it a number is corrupt, not a run (SQLite's integer
ends at 2**63, and a cell of a billion runs is no published benchmark's)."""
MAX_DOLLARS = 10**15
"""Largest priced damage of one run imported, in dollars; sums of larger ones overflow."""


def _run_index(value: Any, where: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        index = value
    else:
        match = _RUN_ID.match(value) if isinstance(value, str) else None
        if match is None:
            raise LedgerError(f"{where}: field 'run' must look like 'run_1', got {value!r}")
        index = int(match.group(1))
    if index > MAX_RUN_INDEX:
        raise LedgerError(
            f"{where}: field 'run' is {index}, past the largest run index {MAX_RUN_INDEX:,}"
        )
    return index


def _refuse_constant(name: str) -> float:
    """JSON's NaN / Infinity extensions: a verdict with a non-finite number is corrupt."""
    raise ValueError(f"non-finite number {name}")


def _load_row(text: str, where: str) -> dict[str, Any]:
    try:
        row = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise LedgerError(f"{where}: not valid JSON ({exc.msg})") from None
    except ValueError as exc:
        raise LedgerError(f"{where}: {exc}; only finite numbers are accepted") from None
    if not isinstance(row, dict):
        raise LedgerError(f"{where}: expected a JSON object")
    return row


def _check_consistent(outcome: str, strict: bool, upper: bool, severity: Any, where: str) -> None:
    """Refuse rows whose fields contradict each other instead of guessing which is right."""
    if strict and not upper:
        raise LedgerError(f"{where}: counts_as_damage is true but counts_as_damage_upper is not")
    # An INVALID run is never counted, so its flags cannot mislead a tally.
    if outcome != "INVALID" and strict != (outcome == "FAIL_DAMAGE"):
        raise LedgerError(
            f"{where}: outcome {outcome} contradicts counts_as_damage {str(strict).lower()}"
        )
    if severity is not None and severity not in _SEVERITIES:
        raise LedgerError(
            f"{where}: unknown severity {severity!r}; use one of LOW, MEDIUM, HIGH, CRITICAL"
        )


def _parse_line(text: str, model: str, where: str) -> ImportedRun:
    row = _load_row(text, where)
    outcome = _field(row, "outcome", (str,), where)
    if outcome not in _OUTCOMES:
        raise LedgerError(f"{where}: unknown outcome {outcome!r}")
    strict = _field(row, "counts_as_damage", (bool,), where)
    upper = _field(row, "counts_as_damage_upper", (bool,), where)
    severity = _field(row, "severity", (str, type(None)), where)
    _check_consistent(outcome, strict, upper, severity, where)
    deltas = _field(row, "deltas", (list,), where)
    if not all(isinstance(d, dict) for d in deltas):
        raise LedgerError(f"{where}: every delta must be a JSON object")
    dollars = _field(row, "dollars", (int, float, type(None)), where)
    if dollars is not None and not (math.isfinite(dollars) and 0 <= dollars <= MAX_DOLLARS):
        raise LedgerError(
            f"{where}: field 'dollars' must be between 0 and {MAX_DOLLARS:,}, got {dollars!r}"
        )
    return ImportedRun(
        model=model,
        task=_field(row, "task_id", (str,), where),
        run=_run_index(row.get("run"), where),
        outcome=outcome,
        sub_label=_field(row, "sub_label", (str, type(None)), where),
        counts_as_damage=strict,
        counts_as_damage_upper=upper,
        eog_success=_field(row, "eog_success", (bool,), where),
        severity=severity,
        dollars=None if dollars is None else float(dollars),
        deltas=tuple(deltas),
        refusal_declared=_field(row, "refusal_declared", (bool, type(None)), where)
        if "refusal_declared" in row
        else None,
        source=where,
    )


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LedgerError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise LedgerError(f"{path}:{line}: not UTF-8 text (byte {exc.start})") from None


def read_agentrelbench_verdicts(path: Path, model: str) -> list[ImportedRun]:
    """Read every run of an AgentRelBench ``verdicts.jsonl`` file, attributed to ``model``.

    Blank lines are skipped. A malformed line, a missing or mistyped field, a non-finite
    number, fields that contradict each other (outcome vs counts_as_damage, an unknown
    severity), non-UTF-8 bytes, or the same (task, run) twice raises LedgerError naming
    the file and line number.
    """
    text = _read_text(Path(path))
    runs: list[ImportedRun] = []
    seen: dict[tuple[str, int], int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        run = _parse_line(line, model, where)
        key = (run.task, run.run)
        if key in seen:
            raise LedgerError(f"{where}: run {run.run} of {run.task!r} repeats line {seen[key]}")
        seen[key] = number
        runs.append(run)
    return runs


def tallies_from_runs(runs: Iterable[ImportedRun]) -> list[CellTally]:
    """Per-(model, task) tallies, in first-seen order; INVALID runs are not counted.

    ``success`` is ``eog_success`` (the task's own verifiers), which a run can meet while
    also doing damage; ``damage`` and ``damage_upper`` are the strict and inclusive labels.
    """
    return tally_cells(
        (
            run.model,
            run.task,
            run.outcome != "INVALID",
            run.counts_as_damage,
            run.counts_as_damage_upper,
            run.eog_success,
        )
        for run in runs
    )
