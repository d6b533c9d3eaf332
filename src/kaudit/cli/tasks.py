"""`kaudit tasks`: what a suite holds."""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any

import typer
from rich.console import Console

from kaudit.cli._common import guarded, print_json
from kaudit.cli._plural import counted
from kaudit.cli._tables import print_tables
from kaudit.report import TextTable
from kaudit.spec import Task
from kaudit.suites import load_suite, task_summaries


def register(app: typer.Typer) -> None:
    """Add the `tasks` group."""
    group = typer.Typer(help="Inspect task suites.", no_args_is_help=True)
    app.add_typer(group, name="tasks")

    @group.command("schema")
    def schema() -> None:
        """Print the JSON Schema of task files, for editors that validate YAML.

        Example: kaudit tasks schema > task.schema.json
        """
        print_json(Task.model_json_schema())

    @group.command("list")
    @guarded
    def list_tasks(
        suite: Annotated[
            str, typer.Option(help="'builtin', a directory, or PREFIX:PATH.")
        ] = "builtin",
        variants: Annotated[
            bool, typer.Option(help="Include generated distractor variants.")
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """List the tasks of a suite.

        Example: kaudit tasks list --suite builtin --json
        """
        loaded = load_suite(suite)
        rows = task_summaries(loaded, variants=variants)
        if as_json:
            print_json(rows)
            return
        title = f"suite {loaded.name} ({counted(len(rows), 'task')})"
        headers = ("task", "vertical", "irreversibility", "priced", "counterexamples")
        cells = tuple(
            (row["id"], row["vertical"], row["irreversibility"], "yes" if row["priced"] else "",
             expected_outcomes(row["counterexamples"]))
            for row in rows
        )  # fmt: skip
        print_tables([TextTable(title, headers, cells, left=5, ids=1)], Console(highlight=False))


def expected_outcomes(counterexamples: list[dict[str, Any]]) -> str:
    """How many counterexamples expect each outcome, worst first: '2 FAIL_DAMAGE, 1 FAIL_SAFE'."""
    order = ("FAIL_DAMAGE", "FAIL_SAFE", "PASS")
    found = Counter(str(c["expected_outcome"]) for c in counterexamples)
    ranked = sorted(found, key=lambda o: order.index(o) if o in order else len(order))
    return ", ".join(f"{found[outcome]} {outcome}" for outcome in ranked)
