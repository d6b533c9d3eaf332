"""`kaudit tasks`: what a suite holds."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from kaudit.cli._common import guarded, print_json
from kaudit.spec import Task
from kaudit.suites import load_suite


def task_summary(task: Task) -> dict[str, Any]:
    """The `tasks list --json` entry of one task."""
    return {
        "id": task.id,
        "vertical": task.vertical,
        "irreversibility": task.irreversibility,
        "priced": task.priced,
        "lever": task.lever,
        "tools": list(task.tools),
        "counterexamples": [
            {"name": s.name, "expected_outcome": s.expected.outcome} for s in task.counterexamples
        ],
        "faults": [rule.model_dump(mode="json", exclude_none=True) for rule in task.faults],
        "identity": task.identity.role if task.identity else None,
    }


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
        loaded = load_suite(suite).with_variants() if variants else load_suite(suite)
        rows = [task_summary(task) for task in loaded.tasks.values()]
        if as_json:
            print_json(rows)
            return
        table = Table(title=f"suite {loaded.name} ({len(rows)} tasks)")
        for column in ("task", "vertical", "irreversibility", "priced", "counterexamples"):
            table.add_column(column)
        for row in rows:
            outcomes = ", ".join(
                f"{c['name']}={c['expected_outcome']}" for c in row["counterexamples"]
            )
            table.add_row(
                row["id"],
                row["vertical"],
                row["irreversibility"],
                "yes" if row["priced"] else "",
                outcomes,
            )
        Console().print(table)
