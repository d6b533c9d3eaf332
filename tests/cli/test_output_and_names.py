"""Bad input that changed something it must not: an output over the ledger, a name that
rewrites the terminal, a YAML merge key. Each is one error line, exit 2, nothing changed."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.errors import SpecError
from kaudit.ledger import Ledger, RunRecord
from kaudit.spec._yaml import parse_yaml
from tests.ledger.conftest import run_ledger

runner = CliRunner()


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_ledger(tmp_path_factory.mktemp("out") / "audit.sqlite", k=2)


@pytest.mark.parametrize(
    "args",
    [
        ["report", "{ledger}", "--html", "{target}"],
        ["export", "{ledger}", "--to", "csv", "--out", "{target}"],
        ["export", "{ledger}", "--to", "jsonl", "--out", "{target}"],
    ],
    ids=["report-html", "export-csv", "export-jsonl"],
)
@pytest.mark.parametrize("target", ["the ledger", "a link to it", "another sqlite file"])
def test_an_output_never_overwrites_a_ledger_or_sqlite_file(
    ledger: Path, tmp_path: Path, args: list[str], target: str
) -> None:
    """Fails if `report L --html L` or `export L --out L` (or a link to L, or another SQLite
    file) writes over it (tried by hand: both replaced the ledger with a page or a CSV)."""
    copy = tmp_path / "audit.sqlite"
    shutil.copyfile(ledger, copy)
    if target == "the ledger":
        out = copy
    elif target == "a link to it":
        out = tmp_path / "link.sqlite"
        out.symlink_to(copy)
    else:
        out = tmp_path / "other.db"
        sqlite3.connect(out).execute("CREATE TABLE t (a)").connection.close()
    before = out.read_bytes()
    result = runner.invoke(app, [a.format(ledger=copy, target=out) for a in args])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert "SQLite database" in result.stderr or "is the ledger being read" in result.stderr
    assert out.read_bytes() == before


def test_a_name_with_control_characters_is_printed_escaped(tmp_path: Path) -> None:
    """Fails if a model name holding `ESC[2J` (an MCP client's declared name) reaches the
    terminal raw, where it clears the auditor's screen (tried by hand: `report` printed
    it as is)."""
    path = tmp_path / "audit.sqlite"
    evil = "mcp:\x1b[2J\x1b[Hclean"
    with Ledger(path) as store:
        store.open_campaign("c", {})
        store.append(
            RunRecord(
                campaign="c", model=evil, task="t\x07", run_index=0, seed=0, status="labeled",
                outcome="PASS", success=True,
            )
        )  # fmt: skip
    for args in (["report", str(path)], ["stats", str(path), "--bootstrap", "10"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and "\x07" not in result.output
        assert "mcp:\\x1b[2J\\x1b[Hclean" in result.output
    result = runner.invoke(app, ["report", str(path), "--campaign", "no\x1bsuch"])
    assert result.exit_code == 2 and "\x1b" not in result.stderr
    assert "no\\x1bsuch" in result.stderr


def test_a_yaml_merge_key_is_refused() -> None:
    """Fails if `<<:` slips past the duplicate-key refusal: it gives a key twice by
    another spelling, and `run` then scored a task whose own oracle fails."""
    with pytest.raises(SpecError, match="line 3: merge keys"):
        parse_yaml("id: a\nsetup: x\n<<: {setup: y}\n", "task.yaml")
    assert parse_yaml("'<<': 1\n", "t.yaml") == {"<<": 1}  # a quoted key is a plain key
