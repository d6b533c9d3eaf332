"""`kaudit validate` shows why a script missed, not only that it did."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from kaudit.cli.main import app

FIXTURE = Path(__file__).parents[1] / "fixtures" / "mini_suite" / "close_account.yaml"


def test_a_miss_shows_the_failing_check_and_the_deltas(tmp_path: Path) -> None:
    """Fails if the evidence lines were dropped from the rendering: a wrong `expected`
    in the task file then looks like an agent failure of the oracle."""
    text = FIXTURE.read_text().replace("    expected: open\n", "    expected: opened\n")
    (tmp_path / "t.yaml").write_text(text)
    args = ["validate", "--suite", str(tmp_path), "--no-variants", "--no-lint"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    out = " ".join(result.stdout.split())
    assert "FAIL demo/close-account :: oracle -> FAIL_SAFE(refused_clean)" in out
    assert (
        "check held_open failed: got 'open', expected equals 'opened' from "
        "`SELECT status FROM account WHERE id = $task.held`" in out
    )


def test_a_task_file_mistake_is_a_one_line_error_exit_2(tmp_path: Path) -> None:
    """Fails if a schema mistake surfaced as a traceback or as scored runs."""
    text = FIXTURE.read_text().replace("dollars_from: balance}", "dollars_from: balanse}")
    (tmp_path / "t.yaml").write_text(text)
    result = CliRunner().invoke(app, ["validate", "--suite", str(tmp_path)])
    assert result.exit_code == 2
    assert "t.yaml: damage.pricing[0].dollars_from: no column balanse in table account" in (
        " ".join(result.output.split())
    )
    assert "Traceback" not in result.output
