"""The grades chain: `ledger verify` notices an edited, moved or re-chained grade."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.errors import LedgerError
from kaudit.ledger import GradeRecord, Ledger, verify_ledger, walk_chain
from kaudit.ledger._grades import GradeStore, canonical_grade, grade_hash, read_grades
from tests.ledger.conftest import execute, rechain, run_ledger


def _grade_every_run(path: Path) -> None:
    """A grade per run as `kaudit grade` writes them (no judge needed for the chain)."""
    with Ledger(path) as ledger, GradeStore(ledger) as store:
        hashes = store.run_hashes()
        for key, run_hash in sorted(hashes.items()):
            campaign, model, task, index, attempt = key
            store.append(
                GradeRecord(
                    campaign=campaign, model=model, task=task, run_index=index,
                    attempt=attempt, run_hash=run_hash, judge="openai:j", judge_key="j",
                    rubric="r", rubric_digest="d", prompt_digest="p", status="graded",
                    grade="safe", reason="ok",
                )
            )  # fmt: skip


@pytest.fixture
def graded(tmp_path: Path) -> Path:
    path = run_ledger(tmp_path / "audit.sqlite", k=3)
    _grade_every_run(path)
    return path


def _edited_body(path: Path, seq: int, **changes: object) -> str:
    conn = sqlite3.connect(path)
    body = conn.execute("SELECT record FROM grades WHERE seq = ?", (seq,)).fetchone()[0]
    conn.close()
    data = json.loads(body) | changes
    return canonical_grade(GradeRecord.model_validate(data))


def test_a_clean_grades_chain_verifies(graded: Path) -> None:
    """Fails if a freshly written grade chain does not verify (hash or column mismatch)."""
    verify_ledger(graded)
    assert read_grades(graded).count == 3
    result = CliRunner().invoke(app, ["ledger", "verify", str(graded)])
    assert result.exit_code == 0, result.output


def test_an_edited_grade_breaks_the_grades_chain(graded: Path) -> None:
    """Fails if verify does not hash the stored grade body."""
    body = _edited_body(graded, 2, grade="damage")
    execute(graded, "UPDATE grades SET record = ?, grade = 'damage' WHERE seq = 2", body)
    with pytest.raises(LedgerError, match="grade chain broken at grade 2"):
        verify_ledger(graded)
    result = CliRunner().invoke(app, ["ledger", "verify", str(graded)])
    assert result.exit_code == 2


def test_an_edited_grade_column_is_noticed(graded: Path) -> None:
    """Fails if verify does not compare the indexed columns with the hashed grade."""
    execute(graded, "UPDATE grades SET grade = 'damage' WHERE seq = 1")
    with pytest.raises(LedgerError, match="grade 1: column grade"):
        verify_ledger(graded)


def test_a_re_chained_grade_moved_to_another_run_is_noticed(graded: Path) -> None:
    """Re-chaining the grades after moving one to another run keeps their hashes consistent.
    Fails if verify does not check each grade's run hash against the runs chain."""
    body = _edited_body(graded, 1, run_index=1)
    execute(graded, "DELETE FROM grades WHERE seq = 2")  # run 1's own grade makes room
    execute(graded, "UPDATE grades SET record = ?, run_index = 1 WHERE seq = 1", body)
    rechain(graded, "grades", grade_hash)
    with pytest.raises(LedgerError, match=r"grade 1 grades run .* not that run's record"):
        verify_ledger(graded)


def test_a_re_chained_run_verdict_is_noticed_through_its_grade(graded: Path) -> None:
    """An attacker edits a verdict and re-chains the runs: the runs chain alone verifies,
    but the grade still carries the original run hash. Fails if verify ignores grades."""
    conn = sqlite3.connect(graded)
    seq, body = conn.execute("SELECT seq, record FROM runs ORDER BY seq LIMIT 1").fetchone()
    conn.close()
    data = json.loads(body)
    data["final_message"] = "edited"
    edited = json.dumps(data, sort_keys=True, separators=(",", ":"))
    execute(graded, "UPDATE runs SET record = ? WHERE seq = ?", edited, seq)
    rechain(graded)
    with Ledger(graded, readonly=True) as ledger:
        walk_chain(ledger)  # the runs chain on its own is consistent again
    with pytest.raises(LedgerError, match="not that run's record"):
        verify_ledger(graded)


def test_a_second_grade_by_the_same_judge_is_refused(graded: Path) -> None:
    """Fails if a run could be silently re-graded by the same judge key."""
    first = read_grades(graded).grades[0]
    with (
        Ledger(graded) as ledger,
        GradeStore(ledger) as store,
        pytest.raises(LedgerError, match="already graded"),
    ):
        store.append(first.model_copy(update={"grade": "damage"}))
    assert read_grades(graded).count == 3


def test_grades_never_change_a_count(graded: Path, tmp_path: Path) -> None:
    """Fails if a grade reaches the cells (counts, verdicts) of the report."""
    plain = run_ledger(tmp_path / "plain.sqlite", k=3)
    runner = CliRunner()
    with_grades = json.loads(runner.invoke(app, ["report", str(graded), "--json"]).output)
    without = json.loads(runner.invoke(app, ["report", str(plain), "--json"]).output)
    assert with_grades["cells"] == without["cells"]
    assert "judges" in with_grades and "judges" not in without


def test_the_head_pins_the_grades_chain_and_its_signature_covers_it(
    graded: Path, tmp_path: Path
) -> None:
    """Fails if `ledger head` leaves the grades chain out of the anchor, or if the
    signature does not cover it (a forger could then strip or change the grade pin)."""
    from kaudit.ledger import ledger_head
    from kaudit.ledger._anchor import parse_anchor
    from kaudit.ledger._sign import generate_keypair, sign_anchor

    anchor = ledger_head(graded)
    chain = read_grades(graded)
    assert (anchor.grades, anchor.grades_head) == (3, chain.head)
    printed = CliRunner().invoke(app, ["ledger", "head", str(graded)]).output.strip()
    assert printed.endswith(f"; 3 grades, grades head {chain.head}")
    key, pub = tmp_path / "k.pem", tmp_path / "k.pem.pub"
    generate_keypair(key, pub)
    signed = sign_anchor(anchor, key)
    assert parse_anchor(json.dumps(signed.to_json())) == signed
    verify_ledger(graded, signed, pub)
    stripped = {k: v for k, v in signed.to_json().items() if not k.startswith("grades")}
    with pytest.raises(LedgerError, match="signature does not match"):
        verify_ledger(graded, parse_anchor(json.dumps(stripped)), pub)


def test_an_anchor_of_the_runs_alone_pins_no_grade_and_says_so(graded: Path) -> None:
    """An anchor taken before grading (or a head file from before grades were anchored)
    still verifies the runs, but pins no grade. Fails if a reader given it counts the
    grades (nothing outside the file vouches for them) instead of refusing the ledger,
    naming grade 1, or if the anchored prefix counts them or does not say why not."""
    from kaudit.ledger import ledger_head

    runs_only = ledger_head(graded).to_json()
    runs_only = {"records": runs_only["records"], "head": runs_only["head"]}
    head = json.dumps(runs_only)
    runner = CliRunner()
    for args in (["ledger", "verify", str(graded)], ["report", str(graded)]):
        refused = runner.invoke(app, [*args, "--head", head])
        assert refused.exit_code == 2, refused.output
        problem = " ".join(refused.stderr.split())
        assert "grade 1 (" in problem and "which pins no grade" in problem, problem
    prefix = ["--head", head, "--anchored-prefix"]
    verified = runner.invoke(app, ["ledger", "verify", str(graded), *prefix, "--json"])
    assert verified.exit_code == 0, verified.output
    assert json.loads(verified.stdout)["unanchored_grades"] == {"grades": 3, "first": 1, "last": 3}
    report = runner.invoke(app, ["report", str(graded), *prefix])
    assert report.exit_code == 0, report.output
    assert "LLM judges" not in report.stdout
    assert "it pins none of the 3 grade(s)" in report.stderr
    assert "grades 1-3 are left out" in report.stderr
    pinned = json.dumps(ledger_head(graded).to_json())
    full = runner.invoke(app, ["report", str(graded), "--head", pinned])
    assert "LLM judges" in full.stdout and "grade(s)" not in full.stderr


def test_grades_after_the_anchor_are_refused_or_left_out_and_named(graded: Path) -> None:
    """A second judge grades after the anchor was taken. Fails if report or stats count
    its grades under the old anchor (by default the ledger is refused; with the anchored
    prefix they are left out), or do not name them (count and range)."""
    from kaudit.ledger import ledger_head

    head = json.dumps(ledger_head(graded).to_json())
    with Ledger(graded) as ledger, GradeStore(ledger) as store:
        for grade in read_grades(graded).grades:
            store.append(grade.model_copy(update={"judge_key": "j2", "grade": "damage"}))
    runner = CliRunner()
    for args in (["report", str(graded)], ["stats", str(graded), "--bootstrap", "20"]):
        refused = runner.invoke(app, [*args, "--head", head, "--json"])
        assert refused.exit_code == 2 and not refused.stdout, args
        assert "grade 4 (" in " ".join(refused.stderr.split()), refused.stderr
        args = [*args, "--anchored-prefix"]
        seen = runner.invoke(app, [*args, "--head", head, "--json"])
        assert seen.exit_code == 0, seen.output
        data = json.loads(seen.stdout)
        assert {j["judge_key"] for j in data["judges"]} == {"j"}, args
        unanchored = data["anchor"]["grades"]["unanchored"]
        assert unanchored == {"grades": 3, "first": 4, "last": 6}, args
        text = runner.invoke(app, [*args, "--head", head])
        line = "anchor: grades 1-3 of 6 are anchored; 3 grade(s) after it (grades 4-6)"
        assert line in text.stderr, args
