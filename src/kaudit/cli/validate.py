"""`kaudit validate`: prove every task of a suite against its own scripts, and lint it."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer
from rich.console import Console

from kaudit.cli._common import guarded, print_json, split_csv
from kaudit.harness import VALIDATE_CAMPAIGN, ScriptCheck, lint_suite, validate_suite
from kaudit.substrate import DEFAULT_SUBSTRATE
from kaudit.suites import VARIANT_SUFFIX, LintFinding, load_suite


def _as_json(
    checks: list[ScriptCheck], findings: list[LintFinding], passed: int, failed: int
) -> dict[str, Any]:
    return {
        "passed": passed,
        "failed": failed,
        "checks": [
            {
                "task": c.task,
                "script": c.script,
                "expected": c.expected.model_dump(exclude_none=True),
                "outcome": c.outcome,
                "sub_label": c.sub_label,
                "mismatches": list(c.mismatches),
                "evidence": list(c.evidence),
            }
            for c in checks
        ],
        "lint": [{"task": f.task, "rule": f.rule, "message": f.message} for f in findings],
    }


def _render(
    checks: list[ScriptCheck], findings: list[LintFinding], passed: int, failed: int
) -> None:
    console = Console(highlight=False, soft_wrap=True)
    for check in checks:
        mark = "[green]ok[/green]  " if check.passed else "[red]FAIL[/red]"
        label = f"{check.outcome}" + (f"({check.sub_label})" if check.sub_label else "")
        console.print(f"{mark} {check.task} :: {check.script} -> {label}")
        for problem in check.mismatches:
            console.print(f"       {problem}")
        for line in check.evidence:
            console.print(f"         {line}", markup=False)
    for finding in findings:
        console.print(f"[red]LINT[/red] {finding.task} :: {finding.rule}: {finding.message}")
    console.print(f"{passed} passed, {failed} failed")


def register(app: typer.Typer) -> None:
    """Add the `validate` command."""

    @app.command("validate")
    @guarded
    def validate(
        suite: Annotated[
            str, typer.Option(help="'builtin', a directory, or PREFIX:PATH.")
        ] = "builtin",
        tasks: Annotated[str | None, typer.Option(help="Comma-separated task ids.")] = None,
        lint: Annotated[bool, typer.Option(help="Also lint the damage specs.")] = True,
        variants: Annotated[
            bool, typer.Option(help="Also prove each task's generated distractor variant.")
        ] = True,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
        substrate: Annotated[
            str,
            typer.Option(
                help="Where scripts replay: 'sqlite' or a postgresql:// URL"
                " (?reset=rollback: pooled)."
            ),
        ] = DEFAULT_SUBSTRATE,
    ) -> None:
        """Replay each task's oracle (must PASS) and counterexamples (their declared verdicts).

        Each script is one check; each linter finding counts as one failure. Ends with
        `N passed, M failed` and exits 1 on any miss.

        Example: kaudit validate --suite builtin
        """
        loaded = load_suite(suite, substrate)
        if variants:
            loaded = loaded.with_variants()
        wanted = split_csv(tasks)
        if wanted is not None and variants:
            wanted += [
                v for v in loaded.tasks if v.split(VARIANT_SUFFIX)[0] in wanted and v not in wanted
            ]
        chosen = loaded.select(wanted)
        loaded.reclaim(VALIDATE_CAMPAIGN, chosen)  # also proves the substrate is reachable
        checks = asyncio.run(validate_suite(loaded, chosen))
        findings = lint_suite(loaded, chosen) if lint else []
        passed = sum(check.passed for check in checks)
        failed = len(checks) - passed + len(findings)
        if as_json:
            print_json(_as_json(checks, findings, passed, failed))
        else:
            _render(checks, findings, passed, failed)
        if failed:
            raise typer.Exit(1)
