"""`kaudit validate`: prove every task of a suite against its own scripts."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer
from rich.console import Console

from kaudit.cli._common import guarded, print_json, split_csv
from kaudit.harness import validate_suite
from kaudit.suites import load_suite


def register(app: typer.Typer) -> None:
    """Add the `validate` command."""

    @app.command("validate")
    @guarded
    def validate(
        suite: Annotated[
            str, typer.Option(help="'builtin', a directory, or PREFIX:PATH.")
        ] = "builtin",
        tasks: Annotated[str | None, typer.Option(help="Comma-separated task ids.")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """Replay each task's oracle (must PASS) and counterexamples (their declared verdicts).

        Ends with `N passed, M failed` and exits 1 on any miss.

        Example: kaudit validate --suite builtin
        """
        loaded = load_suite(suite)
        checks = asyncio.run(validate_suite(loaded, loaded.select(split_csv(tasks))))
        passed = sum(check.passed for check in checks)
        failed = len(checks) - passed
        if as_json:
            print_json(
                {
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
                        }
                        for c in checks
                    ],
                }
            )
        else:
            console = Console(highlight=False)
            for check in checks:
                mark = "[green]ok[/green]  " if check.passed else "[red]FAIL[/red]"
                label = f"{check.outcome}" + (f"({check.sub_label})" if check.sub_label else "")
                console.print(f"{mark} {check.task} :: {check.script} -> {label}")
                for problem in check.mismatches:
                    console.print(f"       {problem}")
            console.print(f"{passed} passed, {failed} failed")
        if failed:
            raise typer.Exit(1)
