"""`kaudit ledger import`: all or nothing, strict rows, no mixing with executed campaigns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.ledger import ledger_head
from tests.conftest import FIXTURES
from tests.ledger.test_agentrelbench_import import ROW

runner = CliRunner()


def rows_file(path: Path, *rows: dict[str, object] | str) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def run_row(index: int, **changes: object) -> dict[str, object]:
    return {**ROW, "run": f"run_{index}", **changes}


def imported(ledger: Path, *files: str, campaign: str | None = None) -> tuple[int, str, str]:
    args = ["ledger", "import", "--ledger", str(ledger)]
    for spec in files:
        args += ["--model-file", spec]
    args += ["--campaign", campaign] if campaign else []
    result = runner.invoke(app, args)
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout, result.stderr


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def record_count(ledger: Path) -> int:
    return ledger_head(ledger).records if ledger.exists() else 0


def test_a_bad_later_file_leaves_nothing_imported(tmp_path: Path) -> None:
    """One commit per record left the first file in the ledger when the second failed."""
    good = rows_file(tmp_path / "a.jsonl", run_row(1), run_row(2))
    bad = rows_file(tmp_path / "b.jsonl", run_row(1), run_row(2, outcome="MAYBE"))
    ledger = tmp_path / "arb.sqlite"
    code, _, stderr = imported(ledger, f"a={good}", f"b={bad}")
    assert code == 2
    assert one_error_line(stderr) == f"error: {bad}:2: unknown outcome 'MAYBE'"
    assert record_count(ledger) == 0


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ('{"dollars": NaN}', "non-finite number NaN; only finite numbers are accepted"),
        ('{"dollars": -Infinity}', "non-finite number -Infinity"),
        (json.dumps(run_row(2, dollars=7.5)).replace("7.5", "1e400"), "must be between 0"),
        (run_row(2, dollars=1.7e308), "'dollars' must be between 0 and 1,000,000,000,000,000"),
        (run_row(2, dollars=-0.01), "'dollars' must be between 0 and"),
        ({**run_row(2), "run": 2**70}, "past the largest run index 1,000,000,000"),
        (run_row(2**70), "past the largest run index"),
        (run_row(10**30), "must look like 'run_1'"),
        (run_row(2, outcome="PASS"), "outcome PASS contradicts counts_as_damage true"),
        (
            run_row(2, outcome="FAIL_DAMAGE", counts_as_damage=False),
            "outcome FAIL_DAMAGE contradicts counts_as_damage false",
        ),
        (run_row(2, severity="BANANA"), "unknown severity 'BANANA'"),
    ],
)
def test_contradictory_or_non_finite_rows_are_refused_with_file_and_line(
    tmp_path: Path, row: dict[str, object] | str, message: str
) -> None:
    """NaN dollars reached `report --json` as bare NaN; PASS-with-damage rows were counted;
    a run index of 2**70 and dollars of 1.7e308 or below zero ended in tracebacks in
    `import` and `report` (each tried by hand before the bounds)."""
    path = rows_file(tmp_path / "v.jsonl", run_row(1), row)
    ledger = tmp_path / "arb.sqlite"
    code, _, stderr = imported(ledger, f"m={path}")
    assert code == 2
    line = one_error_line(stderr)
    assert line.startswith(f"error: {path}:2: ") and message in line
    assert record_count(ledger) == 0


def test_non_utf8_is_a_clean_error_naming_the_line(tmp_path: Path) -> None:
    """read_text raised a bare UnicodeDecodeError traceback."""
    path = tmp_path / "v.jsonl"
    path.write_bytes(json.dumps(run_row(1)).encode() + b"\n" + b'{"task_id": "caf\xe9"}\n')
    code, _, stderr = imported(tmp_path / "arb.sqlite", f"m={path}")
    assert code == 2
    assert one_error_line(stderr).startswith(f"error: {path}:2: not UTF-8 text")


def test_a_conflicting_reimport_is_a_conflict_not_already_present(tmp_path: Path) -> None:
    """Skipping by key alone reported a changed verdict as 'already present'."""
    ledger = tmp_path / "arb.sqlite"
    first = rows_file(tmp_path / "v1.jsonl", run_row(1), run_row(2))
    assert imported(ledger, f"m={first}")[0] == 0
    same = rows_file(tmp_path / "copy.jsonl", run_row(1), run_row(2))
    code, stdout, _ = imported(ledger, f"m={same}")
    assert code == 0 and "0 runs imported, 2 already present" in stdout
    changed = run_row(2, outcome="FAIL_SAFE", counts_as_damage=False, severity=None)
    second = rows_file(tmp_path / "v2.jsonl", run_row(1), changed, run_row(3))
    code, _, stderr = imported(ledger, f"m={second}")
    assert code == 2
    line = one_error_line(stderr)
    assert line.startswith(f"error: {second}:2: conflict: run 2 of 'change-request-cab-gate'")
    assert "outcome 'FAIL_DAMAGE' in the ledger, 'FAIL_SAFE' in the file" in line
    assert record_count(ledger) == 2  # run 3 was not imported either


def test_import_into_a_run_campaign_and_run_into_an_import_are_refused(tmp_path: Path) -> None:
    """Imported rows used to count as the executed campaign's finished runs."""
    ledger = tmp_path / "l.sqlite"
    suite = ["run", "--suite", str(FIXTURES / "mini_suite"), "--k", "2", "--ledger", str(ledger)]
    assert runner.invoke(app, suite).exit_code == 0
    path = rows_file(tmp_path / "v.jsonl", run_row(1))
    code, _, stderr = imported(ledger, f"m={path}", campaign="default")
    assert code == 2
    assert "campaign 'default' was written by `kaudit run`" in one_error_line(stderr)
    assert imported(ledger, f"m={path}", campaign="arb")[0] == 0
    result = runner.invoke(app, [*suite, "--campaign", "arb"])
    assert result.exit_code == 2
    assert "campaign 'arb' holds imported agentrelbench runs" in result.stderr
    assert record_count(ledger) == 3


def test_an_imported_refusal_is_graded_from_the_file(tmp_path: Path) -> None:
    """The published `refusal_declared` reaches the transcript graders.

    Fails if the import drops the field (the run is then "ungraded" and the
    refused-but-mutated run is not counted as damage a transcript grader misses).
    """
    from kaudit.ledger import Ledger
    from kaudit.report._grading import grade_transcripts

    ledger = tmp_path / "arb.sqlite"
    clean = run_row(
        2, outcome="PASS", counts_as_damage=False, counts_as_damage_upper=False, deltas=[],
        severity=None, sub_label=None, refusal_declared=False, eog_success=True,
    )  # fmt: skip
    assert imported(ledger, f"m={rows_file(tmp_path / 'v.jsonl', run_row(1), clean)}")[0] == 0
    with Ledger(ledger, readonly=True) as opened:
        records = list(opened.records())
    refusal = next(g for g in grade_transcripts(records) if g.grader == "refusal token")
    assert (refusal.ungraded, refusal.table.runs, refusal.missed) == (0, 2, 1)


def test_a_reimport_into_a_ledger_imported_without_the_refusal_is_present(
    tmp_path: Path,
) -> None:
    """A ledger imported before the declared refusal was kept still takes the same file.

    Fails if the verdicts are compared whole (the file's `refusal_declared` would be a
    conflict with a run that is the same); a changed declaration is still a conflict.
    """
    ledger = tmp_path / "arb.sqlite"
    old = {k: v for k, v in run_row(1).items() if k != "refusal_declared"}
    assert imported(ledger, f"m={rows_file(tmp_path / 'old.jsonl', old)}")[0] == 0
    code, stdout, _ = imported(ledger, f"m={rows_file(tmp_path / 'new.jsonl', run_row(1))}")
    assert code == 0 and "0 runs imported, 1 already present" in stdout
    other = tmp_path / "other.sqlite"
    assert imported(other, f"m={rows_file(tmp_path / 'a.jsonl', run_row(1))}")[0] == 0
    flipped = rows_file(tmp_path / "b.jsonl", run_row(1, refusal_declared=False))
    code, _, stderr = imported(other, f"m={flipped}")
    assert code == 2 and "conflict" in one_error_line(stderr)
