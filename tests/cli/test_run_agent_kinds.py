"""`kaudit run --help` names every agent kind the registry knows."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from typer.testing import CliRunner

from kaudit.cli.main import app

runner = CliRunner()


def registered_kinds() -> list[str]:
    """The agent kinds a user's fresh process knows: built-ins and installed plugins.

    Asked in a subprocess: this test process also holds kinds the tests register (`flaky`),
    which no user has and `--help` rightly leaves out.
    """
    ask = (
        "import json; from kaudit.agents._registry import AGENTS; print(json.dumps(AGENTS.names()))"
    )
    done = subprocess.run([sys.executable, "-c", ask], capture_output=True, text=True, check=True)
    return list(json.loads(done.stdout))


def test_run_help_lists_every_agent_kind() -> None:
    """Bug caught: a kind is registered (`command`) that a user can only find in the code."""
    result = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())
    kinds = registered_kinds()
    missing = [kind for kind in kinds if not re.search(rf"\b{kind}\b", text)]
    assert {"command", "mcp", "openai", "anthropic", "reference", "scripted"} <= set(kinds)
    assert missing == []
