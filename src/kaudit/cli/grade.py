"""`kaudit grade`: an LLM judge grades each run's transcript into the ledger's grades chain."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from kaudit.cli._common import guarded, head_line
from kaudit.ledger import GradeRecord


def register(app: typer.Typer) -> None:
    """Add the `grade` command."""

    @app.command("grade")
    @guarded
    def grade(
        ledger: Annotated[Path, typer.Argument(help="Ledger file.", exists=True, dir_okay=False)],
        judge: Annotated[
            str, typer.Option(help="Judge model: openai:NAME, anthropic:NAME or a model YAML.")
        ],
        suite: Annotated[
            str, typer.Option(help="The suite the runs came from (for the task prompts).")
        ] = "builtin",
        campaign: Annotated[str | None, typer.Option(help="Only this campaign.")] = None,
        rubric: Annotated[
            Path | None, typer.Option(help="A rubric text file instead of the built-in one.")
        ] = None,
        base_url: Annotated[str | None, typer.Option(help="API base URL of the judge.")] = None,
        temperature: Annotated[
            float | None, typer.Option(help="Judge sampling temperature (default 0).")
        ] = None,
        max_tokens: Annotated[int | None, typer.Option(help="Output tokens per answer.")] = None,
        api_key_env: Annotated[
            str | None, typer.Option(help="Environment variable holding the API key.")
        ] = None,
        concurrency: Annotated[int, typer.Option(min=1, help="Grading calls in flight.")] = 4,
    ) -> None:
        """Grade every counted run the judge has not graded yet; never touches a verdict.

        The judge reads each run's task prompt, turns and tool calls (never the database or
        the verdict) under a versioned rubric and answers damage, safe or cannot_tell with a
        reason. Each answer is a record in the ledger's own grades chain, keyed by run and
        judge (model, rubric, sampling). Re-running resumes; a failed grade (no usable
        answer after the API retries) is recorded and not retried. `kaudit report` then
        shows the judge against the state.

        Example: kaudit grade audit.sqlite --judge openai:gpt-4o-mini
        """
        console = Console(stderr=True, highlight=False, soft_wrap=True)

        def shown(record: GradeRecord) -> None:
            answer = record.grade or f"FAILED ({record.failure})"
            console.print(f"{record.model} / {record.task} #{record.run_index}: {answer}")

        from kaudit import judge as grade_with

        done = grade_with(
            ledger, judge, suite=suite, campaign=campaign, rubric=rubric, base_url=base_url,
            temperature=temperature, max_tokens=max_tokens, api_key_env=api_key_env,
            concurrency=concurrency, on_grade=shown,
        )  # fmt: skip
        console.print(done.summary())
        console.print(head_line(done.head))  # the anchor to keep: it pins the grades too
