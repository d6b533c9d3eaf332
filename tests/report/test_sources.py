"""Verdict-file arguments (`MODEL=PATH`): one parser, the same answer from every command."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.errors import KauditError
from kaudit.report import verdict_files
from tests.cli.test_stats_cli import PREREG, verdicts

runner = CliRunner()


def test_the_parser_refuses_one_file_given_twice_under_any_name(tmp_path: Path) -> None:
    """Bug caught: a file named twice (another spelling of its path, another model name)
    parsed as two files, so its runs were pooled twice."""
    a = verdicts(tmp_path, "a", {"t1": (8, 3)})
    b = verdicts(tmp_path, "b", {"t1": (8, 1)})
    assert verdict_files([f"A={a}", f"B={b}"]) == [("A", a), ("B", b)]
    assert verdict_files([f"org=A={a}"]) == [("org", Path(f"A={a}"))]  # a path may hold "="
    again = f"B={a.parent}/./{a.name}"
    with pytest.raises(KauditError, match="is given twice") as raised:
        verdict_files([f"A={a}", again])
    assert "--" not in str(raised.value)
    for bad in ("A", "=p", "A="):
        with pytest.raises(KauditError, match="MODEL=PATH"):
            verdict_files([bad])


def test_every_command_that_reads_verdict_files_refuses_a_file_given_twice(
    tmp_path: Path,
) -> None:
    """`stats`, `plan`, `analyze` and `ledger import` parse `--model-file` alike. Fails on
    the code before: `stats` and `plan` counted the file's 8 runs as 16 (3 damage as 6)
    while `ledger import` quietly skipped the second copy."""
    a = verdicts(tmp_path, "a", {"t1": (8, 3)})
    twice = ["--model-file", f"A={a}", "--model-file", f"A={a}"]
    spec = tmp_path / "prereg.yaml"
    spec.write_text(PREREG)
    assert runner.invoke(app, ["prereg", "freeze", str(spec)]).exit_code == 0
    ledger = tmp_path / "l.sqlite"
    commands = {
        "stats": ["stats", *twice, "--bootstrap", "0"],
        "plan": ["plan", *twice],
        "stats --format agentrelbench": ["stats", "--format", "agentrelbench", f"A={a}",
                                         "--model-file", f"B={a}", "--bootstrap", "0"],
        "analyze": ["analyze", "--prereg", str(spec), "--model-file", f"dev:A={a}", *twice[2:]],
        "ledger import": ["ledger", "import", "--ledger", str(ledger), *twice],
    }  # fmt: skip
    for name, args in commands.items():
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (name, result.output)
        assert "is given twice" in " ".join(result.output.split()), name
    assert not ledger.exists()
    fed_apart = ["--model-file", f"dev:A={a}", "--model-file", f"confirm:A={a}", "--json"]
    assert runner.invoke(app, ["analyze", "--prereg", str(spec), *fed_apart]).exit_code == 0
