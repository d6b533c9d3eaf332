"""Proving a suite: each oracle must PASS and each counterexample get its declared verdict."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from kaudit._threads import outside_running_loop
from kaudit.agents import ScriptedAgent
from kaudit.harness._run import RunRequest, run_pipeline
from kaudit.label import Verdict
from kaudit.spec import Expected, Task
from kaudit.spec._script import Script
from kaudit.substrate._choice import DEFAULT_SUBSTRATE
from kaudit.suites import Suite, load_suite
from kaudit.suites._lint import LintFinding, lint_task
from kaudit.suites._variants import VARIANT_SUFFIX


@dataclass(frozen=True)
class ScriptCheck:
    """One script replayed: what was expected, what the labeler said, and every mismatch."""

    task: str
    script: str
    expected: Expected
    outcome: str | None
    sub_label: str | None
    mismatches: tuple[str, ...]
    evidence: tuple[str, ...] = ()
    """On a miss: each failing check with its SQL error or observed value, each delta
    with its reason, so the author sees which part of the task file is responsible."""

    @property
    def passed(self) -> bool:
        """Whether every declared field matched."""
        return not self.mismatches

    def to_json(self) -> dict[str, Any]:
        """One entry of `kaudit validate --json`'s `checks`."""
        return {
            "task": self.task,
            "script": self.script,
            "expected": self.expected.model_dump(exclude_none=True),
            "outcome": self.outcome,
            "sub_label": self.sub_label,
            "mismatches": list(self.mismatches),
            "evidence": list(self.evidence),
        }


def mismatches(
    expected: Expected, verdict: Verdict | None, invalid_reason: str | None
) -> list[str]:
    """Each declared field that the verdict does not match, as readable text."""
    if verdict is None:
        return [f"run was INVALID: {invalid_reason}"]
    found: list[str] = []
    pairs: list[tuple[str, object, object]] = [("outcome", expected.outcome, verdict.outcome)]
    if expected.sub_label is not None:
        pairs.append(("sub_label", expected.sub_label, verdict.sub_label))
    if expected.success is not None:
        pairs.append(("success", expected.success, verdict.success))
    if expected.severity is not None:
        pairs.append(("severity", expected.severity, verdict.severity))
    for name, want, got in pairs:
        if want != got:
            found.append(f"{name}: expected {want}, got {got}")
    if expected.dollars is not None:
        got_dollars = verdict.dollars
        if got_dollars is None or got_dollars != Decimal(repr(expected.dollars)):
            found.append(f"dollars: expected {expected.dollars}, got {got_dollars}")
    return found


def evidence(verdict: Verdict, task: Task) -> tuple[str, ...]:
    """Why the verdict is what it is: failing checks (SQL and error or value), then deltas."""
    lines: list[str] = []
    sql = {check.name: check for check in task.checks}
    for result in verdict.checks:
        if result.passed:
            continue
        check = sql[result.name]
        got = f"error {result.error}" if result.error else f"got {result.observed!r}"
        lines.append(
            f"check {result.name} failed: {got}, expected {check.compare} "
            f"{check.expected!r} from `{' '.join(check.sql.split())}`"
        )
    for delta in verdict.deltas:
        key = ", ".join(f"{k}={v!r}" for k, v in delta.key)
        lines.append(f"delta {delta.op} {delta.table}({key}) [{delta.severity}]: {delta.reason}")
    return tuple(lines)


VALIDATE_CAMPAIGN = "validate"
"""The campaign name script replays run under (their sandboxes' run ids start with it)."""


async def check_script(suite: Suite, task: Task, script: Script) -> ScriptCheck:
    """Replay `script` on a fresh sandbox and compare its verdict with the declaration."""
    agent = ScriptedAgent(script=script)
    request = RunRequest(
        campaign=VALIDATE_CAMPAIGN, task=task, model=agent.name, run_index=0, seed=0
    )
    result = await run_pipeline(request, agent, suite.substrate(task), referee=suite.referee)
    found = mismatches(script.expected, result.verdict, result.record.invalid_reason)
    if suite.referee is not None:
        judged = result.record.extra.get(suite.referee.name)
        found += suite.referee.script_mismatches(task, script.name, judged)
    attempts = len(result.record.boundary_attempts)
    if script.expected.boundary_attempts not in (None, attempts):
        found.append(
            f"boundary_attempts: expected {script.expected.boundary_attempts}, got {attempts}"
        )
    shown = evidence(result.verdict, task) if found and result.verdict else ()
    return ScriptCheck(
        task=task.id,
        script=script.name,
        expected=script.expected,
        outcome=result.record.outcome,
        sub_label=result.record.sub_label,
        mismatches=tuple(found),
        evidence=shown,
    )


OnCheck = Callable[[ScriptCheck], None]
"""Called with each script's check as soon as it is made (a CLI prints it: progress)."""


async def validate_suite(
    suite: Suite, tasks: list[Task] | None = None, on_check: OnCheck | None = None
) -> list[ScriptCheck]:
    """Every script of every task (or of `tasks`), in suite order, each passed to `on_check`."""
    checks: list[ScriptCheck] = []
    for task in tasks if tasks is not None else list(suite.tasks.values()):
        broken: ScriptCheck | None = None
        for script in task.scripts():
            if broken is not None:  # a check that cannot judge one run judges none
                checks.append(_not_run(task, script, broken))
            else:
                checks.append(await check_script(suite, task, script))
                if any(TASK_CHECK_FAILED in problem for problem in checks[-1].mismatches):
                    broken = checks[-1]
            if on_check is not None:
                on_check(checks[-1])
    return checks


TASK_CHECK_FAILED = "INVALID_TASK_CHECK"
"""The invalid-reason code of a run whose task check errored, was denied or ran too long."""


def _not_run(task: Task, script: Script, broken: ScriptCheck) -> ScriptCheck:
    return ScriptCheck(
        task=task.id,
        script=script.name,
        expected=script.expected,
        outcome=None,
        sub_label=None,
        mismatches=(f"not run: a check of this task failed on {broken.script}",),
    )


def lint_suite(suite: Suite, tasks: list[Task] | None = None) -> list[LintFinding]:
    """Linter findings for every task, or none when the suite opts out of linting."""
    if not suite.lint:
        return []
    chosen = tasks if tasks is not None else list(suite.tasks.values())
    return [finding for task in chosen for finding in lint_task(task, suite.substrate(task).tools)]


@dataclass(frozen=True)
class SuiteValidation:
    """A suite proved against its own scripts and linted: what `kaudit validate` prints.

    Attributes:
        suite: The suite's name.
        checks: One per script replayed, in suite order.
        findings: The linter's findings; each counts as one failure.
    """

    suite: str
    checks: tuple[ScriptCheck, ...]
    findings: tuple[LintFinding, ...] = ()

    @property
    def passed(self) -> int:
        """Scripts whose verdict matched every declared field."""
        return sum(check.passed for check in self.checks)

    @property
    def failed(self) -> int:
        """Scripts that missed, plus linter findings."""
        return len(self.checks) - self.passed + len(self.findings)

    def to_json(self) -> dict[str, Any]:
        """The `kaudit validate --json` document."""
        return {
            "passed": self.passed,
            "failed": self.failed,
            "checks": [check.to_json() for check in self.checks],
            "lint": [{"task": f.task, "rule": f.rule, "message": f.message} for f in self.findings],
        }


def suite_validation(
    suite: str | Suite = "builtin",
    *,
    tasks: Sequence[str] | None = None,
    lint: bool = True,
    variants: bool = True,
    substrate: str = DEFAULT_SUBSTRATE,
    on_check: OnCheck | None = None,
) -> SuiteValidation:
    """Replay every oracle (must PASS) and counterexample (its declared verdict), and lint.

    `suite` is what `audit` takes; `tasks` picks task ids, and with `variants` each
    picked task's distractor variant is proved too. Scripts replay on `substrate`,
    which is reached first (a server that is down is an error, not a failed check).
    `on_check` sees each script's check as it is made, so a long suite shows progress.
    Raises `KauditError` for a bad suite or task id; a miss is a result, never raised.
    """
    loaded = load_suite(suite, substrate) if isinstance(suite, str) else suite
    if variants:
        loaded = loaded.with_variants()
    wanted = None if tasks is None else list(tasks)
    if wanted is not None and variants:
        wanted += [
            v for v in loaded.tasks if v.split(VARIANT_SUFFIX)[0] in wanted and v not in wanted
        ]
    chosen = loaded.select(wanted)
    return outside_running_loop(
        lambda: _validate(loaded, chosen, lint, on_check), name="kaudit-validate"
    )


def _validate(
    suite: Suite, tasks: list[Task], lint: bool, on_check: OnCheck | None
) -> SuiteValidation:
    suite.reclaim(VALIDATE_CAMPAIGN, tasks)  # also proves the substrate is reachable
    checks = asyncio.run(validate_suite(suite, tasks, on_check))
    findings = lint_suite(suite, tasks) if lint else []
    return SuiteValidation(suite.name, tuple(checks), tuple(findings))
