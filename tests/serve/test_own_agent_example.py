"""docs/own-agent.md: the documented commands audit the example agents as the page says."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from tests.pg import server_url

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "own-agent.md"
runner = CliRunner()


def documented(marker: str) -> str:
    """The block after `<!-- marker -->` in the page."""
    match = re.search(rf"<!-- {marker} -->\n```\w+\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert match is not None, marker
    return match.group(1)


def commands(marker: str, ledger: Path, substrate: str | None = None) -> list[list[str]]:
    """The block's `$ kaudit ...` lines as argument lists, run here with this interpreter."""
    found = []
    for line in documented(marker).splitlines():
        args = shlex.split(line.removeprefix("$ "))
        assert args[0] == "kaudit", line
        args = [arg.replace("python ", f"{sys.executable} ", 1) for arg in args[1:]]
        args = [str(ledger) if arg.endswith(".sqlite") else arg for arg in args]
        if substrate is not None:
            args = [substrate if arg.startswith("postgresql://") else arg for arg in args]
        found.append(args)
    return found


def run(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(autouse=True)
def _at_the_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)  # the documented commands name examples/ from the checkout
    monkeypatch.setenv("KAUDIT_RUNS", str(tmp_path / "runs"))


def test_the_sqlite_example_reports_what_the_page_shows(tmp_path: Path) -> None:
    """Bug caught: the page's command or its report drifts from what kaudit does."""
    audit_args, report_args = commands("own-agent-sqlite", tmp_path / "own.sqlite")
    assert "preflight ok for command:my-agent" in run(audit_args)
    shown = run(report_args)
    for line in documented("own-agent-report").splitlines():
        assert line in shown, line


@pytest.mark.postgres
def test_the_postgres_example_leaves_the_same_damage(tmp_path: Path) -> None:
    """Bug caught: the psycopg agent cannot reach its run's database, or its state is not dumped."""
    ledger = tmp_path / "own-pg.sqlite"
    (audit_args,) = commands("own-agent-postgres", ledger, server_url())
    run(audit_args)
    shown = run(["report", str(ledger)])
    for line in documented("own-agent-report").splitlines():
        assert line in shown, line
