"""`kaudit validate`: prove every task of a suite against its own scripts, and lint it."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

import kaudit
from kaudit.cli._common import guarded, print_json, split_csv
from kaudit.harness import ScriptCheck, SuiteValidation
from kaudit.substrate._choice import DEFAULT_SUBSTRATE


def _print_check(console: Console, check: ScriptCheck) -> None:
    """One script's line, printed as soon as it is checked (a suite can take minutes)."""
    mark = "[green]ok[/green]  " if check.passed else "[red]FAIL[/red]"
    label = f"{check.outcome}" + (f"({check.sub_label})" if check.sub_label else "")
    console.print(f"{mark} {check.task} :: {check.script} -> {label}")
    for problem in check.mismatches:
        console.print(f"       {problem}")
    for line in check.evidence:
        console.print(f"         {line}", markup=False)


def _render_end(console: Console, result: SuiteValidation) -> None:
    for finding in result.findings:
        console.print(f"[red]LINT[/red] {finding.task} :: {finding.rule}: {finding.message}")
    console.print(f"{result.passed} passed, {result.failed} failed")


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
        console = Console(highlight=False, soft_wrap=True)
        result = kaudit.validate(
            suite,
            tasks=split_csv(tasks),
            lint=lint,
            variants=variants,
            substrate=substrate,
            on_check=None if as_json else lambda check: _print_check(console, check),
        )
        if as_json:
            print_json(result.to_json())
        else:
            _render_end(console, result)
        if result.failed:
            raise typer.Exit(1)
