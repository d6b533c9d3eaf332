"""`kaudit run --help` names every agent kind the registry knows."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from kaudit.agents import AGENTS
from kaudit.cli.main import app

runner = CliRunner()


def test_run_help_lists_every_agent_kind() -> None:
    """Bug caught: a kind is registered (`command`) that a user can only find in the code."""
    result = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())
    missing = [kind for kind in AGENTS.names() if not re.search(rf"\b{kind}\b", text)]
    assert {"command", "mcp", "openai", "anthropic", "reference", "scripted"} <= set(AGENTS.names())
    assert missing == []
