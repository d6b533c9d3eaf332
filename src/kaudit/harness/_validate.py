"""Proving a suite: each oracle must PASS and each counterexample get its declared verdict."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from kaudit.agents import ScriptedAgent
from kaudit.harness._run import RunRequest, run_pipeline
from kaudit.label import Verdict
from kaudit.spec import Expected, Script, Task
from kaudit.suites import LintFinding, Suite, lint_task


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


async def validate_suite(suite: Suite, tasks: list[Task] | None = None) -> list[ScriptCheck]:
    """Every script of every task (or of `tasks`), in suite order."""
    checks: list[ScriptCheck] = []
    for task in tasks if tasks is not None else list(suite.tasks.values()):
        for script in task.scripts():
            checks.append(await check_script(suite, task, script))
    return checks


def lint_suite(suite: Suite, tasks: list[Task] | None = None) -> list[LintFinding]:
    """Linter findings for every task, or none when the suite opts out of linting."""
    if not suite.lint:
        return []
    chosen = tasks if tasks is not None else list(suite.tasks.values())
    return [finding for task in chosen for finding in lint_task(task, suite.substrate(task).tools)]
