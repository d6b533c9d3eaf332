"""Every tampering an adversary with write access to the ledger file can do, against every
reader, with and without a signed anchor: the outcome of each cell is the documented one
(docs/ledger.md, "What a forger can and cannot do").

Outcomes:
- REFUSED: the reader exits 2 naming what is wrong (the gate also prints its denial, whose
  first reason is `verified_ledger`, when the rows can still be read unverified);
- SAME: the reader prints exactly what it prints for the untampered ledger;
- ACCEPTED: the reader runs (exit as usual) on changed numbers: what a chain alone cannot
  catch (a rewrite with every hash recomputed, a truncation, an appended run), which is
  why an anchor is kept outside the file;
- PREFIX: only asked for with `--anchored-prefix`: as SAME, and the reader reports the
  records after the anchor as left out. Given an anchor without that flag, a ledger
  holding any record after the anchored one is REFUSED, naming the first of them.

The untampered ledger: three runs of the mini suite, then a retried run (INVALID, then
its verdict as attempt 1) appended the way `kaudit run` does, anchored by a signed head.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.ledger import Ledger, RunRecord, record_hash
from kaudit.ledger._anchor import GENESIS
from kaudit.ledger._sign import generate_keypair, sign_anchor
from tests.ledger.conftest import rechain, run_ledger

runner = CliRunner()
REFUSED, SAME, PREFIX, ACCEPTED = "refused", "same", "prefix", "accepted"
PADDING = 3
REFEREED = 10
"""Records chained after the anchor by the refereed padding (the issue's forgery 4)."""


@dataclass(frozen=True)
class Fixture:
    """The untampered ledger, its signed anchor and public key, a donor and events."""

    ledger: Path
    anchor: Path
    pubkey: Path
    donor: Path
    events: Path
    folder: Path


def _retried_run(ledger: Path) -> None:
    """Append run 3 as INVALID attempt 0, then its verdict as attempt 1 (a real retry)."""
    with Ledger(ledger) as store:
        last = list(store.records())[-1]
        store.claim((last.campaign, last.model, last.task, 3))
        failed = RunRecord(
            campaign=last.campaign, model=last.model, task=last.task, run_index=3, seed=3,
            status="invalid", invalid_reason="harness error: seed failed",
            task_digest=last.task_digest, stopping_rule=last.stopping_rule,
        )  # fmt: skip
        store.append(failed)
        store.append(last.model_copy(update={"run_index": 3, "seed": 3, "attempt": 1}))


@pytest.fixture(scope="module")
def fixture(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    folder = tmp_path_factory.mktemp("tamper")
    ledger = run_ledger(folder / "audit.sqlite", k=3)
    _retried_run(ledger)
    donor = run_ledger(folder / "donor.sqlite", k=2, campaign="other")
    key, pubkey = folder / "sign.pem", folder / "sign.pem.pub"
    generate_keypair(key, pubkey)
    with Ledger(ledger, readonly=True) as store:
        head = sign_anchor(store.head(), key)
        cells = {(r.model, r.task) for r in store.records()}
    anchor = folder / "audit.head.json"
    anchor.write_text(json.dumps(head.to_json()))
    events = folder / "events.jsonl"
    lines = [{"model": m, "task": t, "harm": i == 0} for m, t in sorted(cells) for i in range(6)]
    events.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return Fixture(ledger, anchor, pubkey, donor, events, folder)


# -- tamperings: each edits a copy of the ledger as an adversary with the file would ----------


def _sql(*statements: str) -> Callable[[Path, Fixture], None]:
    def tamper(path: Path, fixture: Fixture) -> None:
        conn = sqlite3.connect(path)
        for statement in statements:
            conn.execute(statement)
        conn.commit()
        conn.close()

    return tamper


def _edit_verdict(path: Path, fixture: Fixture, chain: bool) -> None:
    """Turn record 3's damage into a clean pass, columns kept in step with the JSON."""
    conn = sqlite3.connect(path)
    data = json.loads(conn.execute("SELECT record FROM runs WHERE seq = 3").fetchone()[0])
    data.update(outcome="PASS", counts_as_damage=False, counts_as_damage_upper=False)
    body = json.dumps(data, sort_keys=True, separators=(",", ":"))
    conn.execute(
        "UPDATE runs SET record = ?, outcome = 'PASS', counts_as_damage = 0, "
        "counts_as_damage_upper = 0 WHERE seq = 3",
        (body,),
    )
    conn.commit()
    conn.close()
    if chain:
        rechain(path)


def _append(path: Path, records: list[dict[str, Any]]) -> None:
    """Append records with their hashes chained properly, as a forger with the file can."""
    conn = sqlite3.connect(path)
    for data in records:
        seq, prev = conn.execute(
            "SELECT MAX(seq) + 1, (SELECT record_hash FROM runs ORDER BY seq DESC LIMIT 1) "
            "FROM runs"
        ).fetchone()
        prev = prev or GENESIS
        body = json.dumps(data, sort_keys=True, separators=(",", ":"))
        conn.execute(
            "INSERT INTO runs (seq, campaign, model, task, run_index, attempt, status, outcome, "
            "counts_as_damage, counts_as_damage_upper, success, record, prev_hash, record_hash) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                seq, data["campaign"], data["model"], data["task"], data["run_index"],
                data["attempt"], data["status"], data["outcome"], int(data["counts_as_damage"]),
                int(data["counts_as_damage_upper"]), int(data["success"]), body, prev,
                record_hash(prev, body),
            ),
        )  # fmt: skip
    conn.commit()
    conn.close()


def _record(path: Path, seq: int) -> dict[str, Any]:
    conn = sqlite3.connect(path)
    data: dict[str, Any] = json.loads(
        conn.execute("SELECT record FROM runs WHERE seq = ?", (seq,)).fetchone()[0]
    )
    conn.close()
    return data


def _forged_retry(path: Path, fixture: Fixture) -> None:
    """A second verdict for the damaging run 2, as a 'retry' with a higher attempt."""
    data = _record(path, 3)
    data.update(attempt=1, outcome="PASS", counts_as_damage=False, counts_as_damage_upper=False)
    _append(path, [data])


def _forged_invalid(path: Path, fixture: Fixture) -> None:
    """An INVALID record after run 2's verdict, to make the damaging run not count."""
    data = _record(path, 3)
    data.update(attempt=1, status="invalid", outcome=None, sub_label=None, severity=None,
                counts_as_damage=False, counts_as_damage_upper=False, success=False,
                invalid_reason="harness error")  # fmt: skip
    _append(path, [data])


def _padding(path: Path, fixture: Fixture) -> None:
    """Extra clean runs for the cell, new run indices, chained after the anchor."""
    data = _record(path, 2)  # a PASS
    _append(path, [data | {"run_index": 10 + i, "seed": 10 + i} for i in range(PADDING)])


def _refereed_padding(path: Path, fixture: Fixture) -> None:
    """A table built past the anchor: an AgentDojo-labelled manifest (outside the chain)
    and ten chained runs after the anchored head, each carrying AgentDojo's own judgment,
    so the suite's own-checks comparison would be built from them alone."""
    _agentdojo_manifest(path)
    data = _record(path, 2)
    judged = data["extra"] | {"agentdojo": {"utility": True, "security": False}}
    _append(path, [data | {"run_index": 20 + i, "seed": 20 + i, "extra": judged}
                   for i in range(REFEREED)])  # fmt: skip


def _agentdojo_manifest(path: Path) -> None:
    conn = sqlite3.connect(path)
    for name, manifest in conn.execute("SELECT name, manifest FROM campaigns").fetchall():
        data = json.loads(manifest) | {"suite": {"name": "agentdojo:v1.2", "tasks": 1}}
        conn.execute("UPDATE campaigns SET manifest = ? WHERE name = ?", (json.dumps(data), name))
    conn.commit()
    conn.close()


def _manifest(path: Path, fixture: Fixture) -> None:
    conn = sqlite3.connect(path)
    manifest = json.loads(conn.execute("SELECT manifest FROM campaigns").fetchone()[0])
    manifest["stopping_rule"] = {"kind": "sequential", "text": "sequential: forged"}
    manifest["k"] = 60
    conn.execute("UPDATE campaigns SET manifest = ?", (json.dumps(manifest),))
    conn.commit()
    conn.close()


def _suite_tasks(path: Path, fixture: Fixture) -> None:
    """Drop a never-run task from the manifest's suite list: the gate's coverage gap."""
    conn = sqlite3.connect(path)
    manifest = json.loads(conn.execute("SELECT manifest FROM campaigns").fetchone()[0])
    manifest["suite_tasks"] = manifest["suite_tasks"][1:]
    conn.execute("UPDATE campaigns SET manifest = ?", (json.dumps(manifest),))
    conn.commit()
    conn.close()


def _replace(path: Path, fixture: Fixture) -> None:
    shutil.copyfile(fixture.donor, path)


def _swap(path: Path, fixture: Fixture) -> None:
    _sql(
        "UPDATE runs SET seq = -seq WHERE seq IN (2, 3)",
        "UPDATE runs SET seq = 3 WHERE seq = -2",
        "UPDATE runs SET seq = 2 WHERE seq = -3",
    )(path, fixture)


def _lying_index(path: Path, fixture: Fixture) -> None:
    """The runs' unique index swapped for a partial one without damage rows, with sqlite3
    alone: no row and no hash changes, but every read through the index misses them."""
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE UNIQUE INDEX lie ON runs (campaign, model, task, run_index, attempt) "
        "WHERE counts_as_damage = 0"
    )
    conn.commit()
    roots = dict(conn.execute("SELECT name, rootpage FROM sqlite_master WHERE type = 'index'"))
    conn.execute("PRAGMA writable_schema = ON")
    for name, other in (("sqlite_autoindex_runs_1", "lie"), ("lie", "sqlite_autoindex_runs_1")):
        conn.execute("UPDATE sqlite_master SET rootpage = ? WHERE name = ?", (roots[other], name))
    conn.commit()
    conn.close()
    _sql("DROP INDEX lie")(path, fixture)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] < len(_all_rows(conn))
    conn.close()


def _all_rows(conn: sqlite3.Connection) -> list[Any]:
    return conn.execute("SELECT seq FROM runs NOT INDEXED").fetchall()


TRIGGER = (
    "CREATE TRIGGER vanish AFTER INSERT ON runs WHEN new.counts_as_damage = 1 BEGIN "
    "DELETE FROM runs WHERE seq = new.seq; DELETE FROM attempts; END"
)
"""Deletes each new damage row (and the attempts that would show it started)."""


CLEAN = "SELECT * FROM runs WHERE counts_as_damage = 0"

TAMPERS: dict[str, tuple[Callable[[Path, Fixture], None], str, str]] = {
    "lying_index": (_lying_index, REFUSED, REFUSED),
    "trigger": (_sql(TRIGGER), REFUSED, REFUSED),
    "view": (_sql(f"CREATE VIEW clean AS {CLEAN}"), REFUSED, REFUSED),
    # name: (tampering, outcome without an anchor, outcome with the signed anchor)
    "foreign_index": (_sql("CREATE INDEX extra ON runs (status)"), REFUSED, REFUSED),
    "edit": (lambda p, f: _edit_verdict(p, f, chain=False), REFUSED, REFUSED),
    "edit_rechained": (lambda p, f: _edit_verdict(p, f, chain=True), ACCEPTED, REFUSED),
    "delete": (_sql("DELETE FROM runs WHERE seq = 2"), REFUSED, REFUSED),
    "delete_rechained": (
        lambda p, f: (_sql("DELETE FROM runs WHERE seq = 2")(p, f), rechain(p))[0],
        REFUSED,  # the rows are then numbered 1, 3, 4, …: renumbering them is refused
        REFUSED,
    ),
    "delete_renumbered_rechained": (
        lambda p, f: (
            _sql("DELETE FROM runs WHERE seq = 2", "UPDATE runs SET seq = seq - 1 WHERE seq > 2")(
                p, f
            ),
            rechain(p),
        )[0],
        ACCEPTED,
        REFUSED,
    ),
    "reorder": (_swap, REFUSED, REFUSED),
    "truncate": (
        _sql("DELETE FROM runs WHERE seq = (SELECT MAX(seq) FROM runs)"),
        ACCEPTED,
        REFUSED,
    ),
    "replace": (_replace, ACCEPTED, REFUSED),
    "forged_retry": (_forged_retry, REFUSED, REFUSED),
    "forged_invalid": (_forged_invalid, REFUSED, REFUSED),
    # records past the anchor: given the anchor, every reader refuses the ledger, naming
    # the first of them (with --anchored-prefix it reads the anchored records alone)
    "padding": (_padding, ACCEPTED, REFUSED),
    "refereed_padding": (_refereed_padding, ACCEPTED, REFUSED),
    "manifest": (_manifest, SAME, SAME),
    # the manifest's suite list (edited, or deleted with its campaign row): each run chains
    # its digest, so the one verified read refuses it for every reader
    "suite_tasks": (_suite_tasks, REFUSED, REFUSED),
    "config": (
        _sql(
            "UPDATE campaigns SET config = json_set(config, '$.seed', 99, '$.task_digest', "
            "json('{}'))"
        ),
        SAME,
        SAME,
    ),
    "campaign_rows": (
        _sql("DELETE FROM campaigns", "INSERT INTO campaigns VALUES ('ghost', '{}', NULL, 0)"),
        REFUSED,
        REFUSED,
    ),
    "attempts_table": (
        _sql("DELETE FROM attempts", "INSERT INTO attempts VALUES ('default', 'x', 'y', 0, 0)"),
        SAME,
        SAME,
    ),
    "seq_renumbered": (_sql("UPDATE runs SET seq = seq + 100"), REFUSED, REFUSED),
    "user_version_1": (_sql("PRAGMA user_version = 1"), REFUSED, REFUSED),
    "user_version_99": (_sql("PRAGMA user_version = 99"), REFUSED, REFUSED),
}

PAST_ANCHOR = {"padding": PADDING, "refereed_padding": REFEREED}
"""Tamperings that only append records after the anchor, and how many they append."""

# -- readers: every command that prints a number taken from a ledger --------------------------


def _readers(ledger: Path, fixture: Fixture) -> dict[str, list[str]]:
    path = str(ledger)
    return {
        "verify": ["ledger", "verify", path, "--json"],
        "report": ["report", path, "--json"],
        "stats": ["stats", path, "--json", "--bootstrap", "20"],
        "gate": ["gate", path, "--authority", "propose", "--json"],
        "monitor": ["monitor", "--audit", path, "--events", str(fixture.events), "--json"],
        "export": ["export", path, "--to", "jsonl"],
        "ledger_export": ["ledger", "export", path],
        "plan": ["plan", "--p", "0.1", "--from-ledger", path, "--json"],
    }


def _anchored(args: list[str], fixture: Fixture) -> list[str]:
    return [*args, "--head", str(fixture.anchor), "--pubkey", str(fixture.pubkey)]


@dataclass(frozen=True)
class Seen:
    code: int
    stdout: str
    stderr: str

    def document(self) -> Any:
        """The stdout as compared: JSON without the anchor note, or the text as it is."""
        try:
            data = json.loads(self.stdout)
        except ValueError:
            return self.stdout
        if isinstance(data, dict):
            data.pop("anchor", None)
            data.pop("unanchored", None)
        return data


def _invoke(args: list[str]) -> Seen:
    result = runner.invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        args,
        result.exception,
    )
    return Seen(result.exit_code, result.stdout, result.stderr)


@pytest.fixture(scope="module")
def baseline(fixture: Fixture) -> dict[tuple[str, bool], Seen]:
    """Each reader on the untampered ledger, bare and anchored."""
    seen = {}
    for name, args in _readers(fixture.ledger, fixture).items():
        seen[name, False] = _invoke(args)
        seen[name, True] = _invoke(_anchored(args, fixture))
    return seen


def _check(reader: str, outcome: str, seen: Seen, base: Seen, left_out: int = 0) -> None:
    where = f"{reader}: {seen.stdout[:300]} {seen.stderr[:300]}"
    if outcome == REFUSED:
        assert seen.code == 2, where
        assert "error:" in seen.stderr, where
        if reader == "gate" and seen.stdout:  # refused, and still a denial with its reason
            reasons = json.loads(seen.stdout)["reasons"]
            assert reasons[0]["rule"] == "verified_ledger", where
        return
    if outcome == ACCEPTED:
        assert seen.code in (0, 3, 4), where  # read as any ledger: the decision may change
        return
    assert (seen.code, seen.document()) == (base.code, base.document()) or reader == "verify", where
    assert seen.code == base.code, where
    if outcome == PREFIX:
        if reader in ("export", "ledger_export"):
            assert f"{left_out} record(s) after it" in seen.stderr, where
            assert "are left out" in seen.stderr, where
        elif reader != "plan":
            data = json.loads(seen.stdout)
            note = data.get("unanchored") or data["anchor"]["unanchored"]
            assert note["records"] == left_out, where


def _problem(stderr: str) -> str:
    """The error line's message, folded to one line (rich wraps long lines)."""
    text = " ".join(stderr.split())
    return text[text.index("error: ") + len("error: ") :]


@pytest.mark.parametrize("anchored", [False, True], ids=["bare", "signed-anchor"])
@pytest.mark.parametrize("tamper", list(TAMPERS))
def test_each_tampering_meets_its_documented_outcome_in_every_reader(
    tamper: str,
    anchored: bool,
    fixture: Fixture,
    baseline: dict[tuple[str, bool], Seen],
    tmp_path: Path,
) -> None:
    """Fails if any reader counts a forged retry or INVALID, lets an edit of a table outside
    the chain (manifest, config, campaign rows, attempts, seq, user_version) move a number,
    counts records appended after an anchor, accepts a rewrite that the anchor pins or a
    file with a foreign trigger, view or index, or names another first problem than
    `ledger verify` does."""
    apply, bare_outcome, anchored_outcome = TAMPERS[tamper]
    copy = tmp_path / "audit.sqlite"
    shutil.copyfile(fixture.ledger, copy)
    apply(copy, fixture)
    outcome = anchored_outcome if anchored else bare_outcome
    problem = None
    for reader, args in _readers(copy, fixture).items():
        seen = _invoke(_anchored(args, fixture) if anchored else args)
        _check(reader, outcome, seen, baseline[reader, anchored])
        if reader == "verify" and outcome == REFUSED:
            problem = _problem(seen.stderr)
        elif problem is not None:  # every reader names the first problem verify names
            assert problem == _problem(seen.stderr), (reader, problem, seen.stderr)


PREFIX_TAMPERS = (*PAST_ANCHOR, "forged_retry", "edit_rechained", "truncate", "trigger")
"""Run with `--anchored-prefix`: the appends past the anchor, and tamperings it must not
excuse (a forged record after the anchor, a rewrite or truncation the anchor pins, a
foreign trigger)."""


def _prefixed(args: list[str], fixture: Fixture) -> list[str]:
    return [*_anchored(args, fixture), "--anchored-prefix"]


@pytest.mark.parametrize("tamper", PREFIX_TAMPERS)
def test_with_the_anchored_prefix_every_reader_reads_only_what_the_anchor_pins(
    tamper: str,
    fixture: Fixture,
    baseline: dict[tuple[str, bool], Seen],
    tmp_path: Path,
) -> None:
    """Fails if `--anchored-prefix` lets a record after the anchor into any number or
    derived table (the referee comparison built from the ten records past it), does not
    say how many records it left out, or stops checking the file: a forged retry after the
    anchor, a rewrite or truncation the anchor pins and a planted trigger stay refused, and
    every reader names the first problem `ledger verify --anchored-prefix` names."""
    apply, _, anchored_outcome = TAMPERS[tamper]
    copy = tmp_path / "audit.sqlite"
    shutil.copyfile(fixture.ledger, copy)
    apply(copy, fixture)
    outcome = PREFIX if tamper in PAST_ANCHOR else anchored_outcome
    problem = None
    for reader, args in _readers(copy, fixture).items():
        seen = _invoke(_prefixed(args, fixture))
        _check(reader, outcome, seen, baseline[reader, True], PAST_ANCHOR.get(tamper, 0))
        if reader == "verify" and outcome == REFUSED:
            problem = _problem(seen.stderr)
        elif problem is not None:
            assert problem == _problem(seen.stderr), (reader, problem, seen.stderr)


def test_the_anchored_prefix_needs_an_anchor(fixture: Fixture) -> None:
    """Fails if a reader takes `--anchored-prefix` without `--head` and reads the whole
    ledger as if it had been pinned, instead of refusing the flag it cannot honour."""
    for reader, args in _readers(fixture.ledger, fixture).items():
        seen = _invoke([*args, "--anchored-prefix"])
        assert seen.code == 2, (reader, seen.stdout)
        assert "--anchored-prefix needs --head" in _problem(seen.stderr), (reader, seen.stderr)


def test_a_forged_anchor_fails_the_signature_check_in_every_reader(
    fixture: Fixture, tmp_path: Path
) -> None:
    """Fails if a reader takes `--head` without checking its signature against `--pubkey`:
    whoever rewrote the chain can write a matching unsigned anchor."""
    copy = tmp_path / "audit.sqlite"
    shutil.copyfile(fixture.ledger, copy)
    _edit_verdict(copy, fixture, chain=True)
    with Ledger(copy, readonly=True) as store:
        forged = tmp_path / "forged.json"
        forged.write_text(json.dumps(store.head().to_json()))
    for reader, args in _readers(copy, fixture).items():
        seen = _invoke([*args, "--head", str(forged), "--pubkey", str(fixture.pubkey)])
        assert seen.code == 2 and "no signature" in seen.stderr, (reader, seen.stderr)


def test_a_bare_head_hex_pins_the_records_up_to_it(fixture: Fixture, tmp_path: Path) -> None:
    """Fails if an anchor given as a bare head hex (no record count) lets the records
    appended after its record pass (refused by default, left out in the anchored prefix),
    or pins fewer records than it names."""
    from kaudit.ledger import PastAnchorError, read_runs, verify_ledger
    from kaudit.ledger._anchor import parse_anchor

    copy = tmp_path / "audit.sqlite"
    shutil.copyfile(fixture.ledger, copy)
    _padding(copy, fixture)
    pinned = json.loads(fixture.anchor.read_text())
    anchor = parse_anchor(pinned["head"])
    with pytest.raises(PastAnchorError) as refused:
        verify_ledger(copy, anchor)
    assert (refused.value.position, refused.value.anchored) == (pinned["records"] + 1,
                                                                pinned["records"])  # fmt: skip
    checked = verify_ledger(copy, anchor, anchored_prefix=True)
    assert (checked.records, checked.anchored_records) == (pinned["records"] + PADDING,
                                                           pinned["records"])  # fmt: skip
    with Ledger(copy, readonly=True) as store, Ledger(fixture.ledger, readonly=True) as clean:
        read = read_runs(store, anchor=anchor, anchored_prefix=True)
        assert read.runs == read_runs(clean).runs


# -- the grades chain: a graded copy of the ledger, anchored with both chain heads -----------

GRADE_READERS = ("verify", "report", "stats")
"""The readers that print (or check) judge grades; every other reader ignores the table."""
JUDGES = ("judge-a", "judge-b")


def _append_grades(ledger: Path, judge: str) -> None:
    """One grade per counted labeled run by `judge`, chained as `kaudit grade` writes them."""
    from kaudit.ledger import GradeRecord
    from kaudit.ledger._grades import GradeStore

    with Ledger(ledger) as store, GradeStore(store) as grades:
        hashes = grades.run_hashes()
        for record in store.records():
            if record.status != "labeled":
                continue
            key = (record.campaign, record.model, record.task, record.run_index, record.attempt)
            said = "damage" if judge == "judge-b" and record.counts_as_damage else "safe"
            grades.append(
                GradeRecord(
                    campaign=record.campaign, model=record.model, task=record.task,
                    run_index=record.run_index, attempt=record.attempt, run_hash=hashes[key],
                    judge=f"openai:{judge}", judge_key=judge, rubric="r", rubric_digest="d",
                    prompt_digest="p", status="graded", grade=said, reason="read",
                )
            )  # fmt: skip


@pytest.fixture(scope="module")
def graded(fixture: Fixture, tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    """The tamper ledger graded by two judges, with a signed anchor of both chains."""
    folder = tmp_path_factory.mktemp("graded")
    ledger = folder / "audit.sqlite"
    shutil.copyfile(fixture.ledger, ledger)
    for judge in JUDGES:
        _append_grades(ledger, judge)
    with Ledger(ledger, readonly=True) as store:
        head = sign_anchor(store.head(), fixture.folder / "sign.pem")
    assert head.grades == GRADES
    anchor = folder / "audit.head.json"
    anchor.write_text(json.dumps(head.to_json()))
    return Fixture(ledger, anchor, fixture.pubkey, fixture.donor, fixture.events, folder)


GRADES = 8
"""Grades in the graded ledger: two judges, four counted labeled runs."""


def _grade_body(path: Path, seq: int, **changes: object) -> str:
    from kaudit.ledger import GradeRecord
    from kaudit.ledger._grades import canonical_grade

    conn = sqlite3.connect(path)
    body = conn.execute("SELECT record FROM grades WHERE seq = ?", (seq,)).fetchone()[0]
    conn.close()
    return canonical_grade(GradeRecord.model_validate(json.loads(body) | changes))


def _edit_grade(path: Path, fixture: Fixture, chain: bool) -> None:
    """Judge B's grade of the damaging run 2 (grade 7) turned from damage to safe."""
    from kaudit.ledger._grades import grade_hash

    _sql_params(path, "UPDATE grades SET record = ?, grade = 'safe' WHERE seq = 7",
                _grade_body(path, 7, grade="safe"))  # fmt: skip
    if chain:
        rechain(path, "grades", grade_hash)


def _sql_params(path: Path, statement: str, *params: object) -> None:
    conn = sqlite3.connect(path)
    conn.execute(statement, params)
    conn.commit()
    conn.close()


def _regraded(path: Path, fixture: Fixture) -> None:
    """A second grade of run 2 by judge B, chained properly after the unique key was
    dropped (the forger rebuilds the table): it would replace the first in a count."""
    from kaudit.ledger._grades import grade_hash

    conn = sqlite3.connect(path)
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'grades'").fetchone()[0]
    loose = sql.replace("CREATE TABLE grades", "CREATE TABLE loose").split(",\n    UNIQUE")[0]
    conn.executescript(
        f"{loose}\n);\nINSERT INTO loose SELECT * FROM grades;\nDROP TABLE grades;\n"
        "ALTER TABLE loose RENAME TO grades;"
    )
    body = _grade_body(path, 7, grade="safe")
    (prev,) = conn.execute("SELECT record_hash FROM grades WHERE seq = ?", (GRADES,)).fetchone()
    row = conn.execute("SELECT * FROM grades WHERE seq = 7").fetchone()
    conn.execute(
        "INSERT INTO grades VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'safe', ?, ?, ?)",
        (GRADES + 1, *row[1:8], body, prev, grade_hash(prev, body)),
    )
    conn.commit()
    conn.close()


def _grades_renumbered_rechained(path: Path, fixture: Fixture) -> None:
    from kaudit.ledger._grades import grade_hash

    _sql("DELETE FROM grades WHERE seq = 3", "UPDATE grades SET seq = seq - 1 WHERE seq > 3")(
        path, fixture
    )
    rechain(path, "grades", grade_hash)


def _third_judge(path: Path, fixture: Fixture) -> None:
    _append_grades(path, "judge-c")


GRADE_TAMPERS: dict[str, tuple[Callable[[Path, Fixture], None], str, str, str, str]] = {
    # name: (tampering, bare outcome, its message, anchored outcome, its message); each
    # message names the first bad grade, or the anchored one that is gone or changed
    "grade_edit": (
        lambda p, f: _edit_grade(p, f, chain=False),
        REFUSED, "grade chain broken at grade 7", REFUSED, "grade chain broken at grade 7",
    ),
    "grade_edit_rechained": (
        lambda p, f: _edit_grade(p, f, chain=True),
        ACCEPTED, "", REFUSED, f"grade {GRADES} has head .* the grade chain was rewritten",
    ),
    "grade_column": (
        _sql("UPDATE grades SET grade = 'damage' WHERE seq = 1"),
        REFUSED, "grade 1: column grade", REFUSED, "grade 1: column grade",
    ),
    "grade_delete": (
        _sql("DELETE FROM grades WHERE seq = 3"),
        REFUSED, "grade chain broken at grade 4", REFUSED, "grade chain broken at grade 4",
    ),
    "grade_delete_renumbered_rechained": (
        _grades_renumbered_rechained,
        ACCEPTED, "", REFUSED, f"truncated: the anchor's grade {GRADES} is missing",
    ),
    "grade_truncate": (
        _sql(f"DELETE FROM grades WHERE seq > {GRADES - 2}"),
        ACCEPTED, "", REFUSED, f"truncated: the anchor's grade {GRADES} is missing",
    ),
    "grades_dropped": (
        _sql("DROP TABLE grades"),
        ACCEPTED, "", REFUSED, f"anchor's grade {GRADES} is missing \\(the ledger has 0 grades",
    ),
    "grade_renumbered": (
        _sql("UPDATE grades SET seq = seq + 100"),
        REFUSED, "grade 101 is row 1 of the grade chain", REFUSED, "grade 101 is row 1",
    ),
    "grade_regraded": (
        _regraded,
        # the rebuilt table is named before any grade is read (its unique key is gone)
        REFUSED, "table 'grades' lacks its unique key", REFUSED, "table 'grades' lacks its unique",
    ),
    "grade_third_judge": (
        _third_judge,
        ACCEPTED, "", REFUSED,
        f"grade {GRADES + 1} \\(.*\\) comes after the anchor, which pins grades 1-{GRADES}",
    ),
}  # fmt: skip


def _grade_readers(ledger: Path, fixture: Fixture) -> dict[str, list[str]]:
    readers = _readers(ledger, fixture)
    return {name: readers[name] for name in (*GRADE_READERS, "gate", "ledger_export")}


@pytest.fixture(scope="module")
def graded_baseline(graded: Fixture) -> dict[tuple[str, bool], Seen]:
    seen = {}
    for name, args in _grade_readers(graded.ledger, graded).items():
        seen[name, False] = _invoke(args)
        seen[name, True] = _invoke(_anchored(args, graded))
    return seen


def _check_grades(reader: str, outcome: str, message: str, seen: Seen, base: Seen) -> None:
    import re

    where = f"{reader}: {seen.stdout[:300]} {seen.stderr[:300]}"
    if reader not in GRADE_READERS and outcome != REFUSED:
        assert (seen.code, seen.document()) == (base.code, base.document()), where
        return
    if outcome == REFUSED:
        assert seen.code == 2 and "error:" in seen.stderr, where
        assert re.search(message, seen.stderr.replace("\n", "")), (message, where)
        return
    if outcome == ACCEPTED:
        assert seen.code == 0, where
        if reader != "verify":
            assert seen.document() != base.document(), where  # the judge figures moved
        return
    assert outcome == PREFIX
    data = json.loads(seen.stdout)
    if reader == "verify":
        note = data["unanchored_grades"]
    else:
        assert seen.document() == base.document(), where
        note = data["anchor"]["grades"]["unanchored"]
    assert note == {"grades": 4, "first": GRADES + 1, "last": GRADES + 4}, where


@pytest.mark.parametrize("anchored", [False, True], ids=["bare", "signed-anchor"])
@pytest.mark.parametrize("tamper", list(GRADE_TAMPERS))
def test_each_grade_tampering_meets_its_documented_outcome(
    tamper: str,
    anchored: bool,
    graded: Fixture,
    graded_baseline: dict[tuple[str, bool], Seen],
    tmp_path: Path,
) -> None:
    """Fails if the anchor does not pin the grades chain (a truncated, re-chained or emptied
    grades chain passes `--head`), if a grade reader counts grades appended after the
    anchor, or misses an edited, deleted, renumbered or second grade without naming the
    first bad grade; if a reader that prints no judge figure is moved by grades; or if
    any reader (those too) names another first problem than verify (one verified read,
    `kaudit.open`, checks both chains for every reader)."""
    apply, bare, bare_message, pinned, pinned_message = GRADE_TAMPERS[tamper]
    copy = tmp_path / "audit.sqlite"
    shutil.copyfile(graded.ledger, copy)
    apply(copy, graded)
    outcome, message = (pinned, pinned_message) if anchored else (bare, bare_message)
    for reader, args in _grade_readers(copy, graded).items():
        seen = _invoke(_anchored(args, graded) if anchored else args)
        _check_grades(reader, outcome, message, seen, graded_baseline[reader, anchored])


def test_with_the_anchored_prefix_grades_after_the_anchor_are_left_out(
    graded: Fixture, graded_baseline: dict[tuple[str, bool], Seen], tmp_path: Path
) -> None:
    """A third judge grades after the anchor was taken. Fails if `--anchored-prefix` counts
    its grades in a judge table, or does not say which grades it left out; every other
    reader prints what it prints for the anchored ledger."""
    copy = tmp_path / "audit.sqlite"
    shutil.copyfile(graded.ledger, copy)
    _third_judge(copy, graded)
    for reader, args in _grade_readers(copy, graded).items():
        seen = _invoke(_prefixed(args, graded))
        _check_grades(reader, PREFIX, "", seen, graded_baseline[reader, True])


# -- past the anchor, and the same ledger twice -------------------------------------------------


def test_a_referee_table_past_the_anchor_is_refused_or_left_out(
    fixture: Fixture, tmp_path: Path
) -> None:
    """A ledger with an AgentDojo-labelled manifest and ten chained records after the
    anchored head. Fails if `report --head --pubkey` reads it (before, it called records
    6-15 "unanchored and not counted" and printed the referee table "(10 runs)" built from
    exactly them), if its refusal does not name the first record past the anchor by number
    and hash and say how to read anyway, or if `--anchored-prefix` builds the table from
    the records it leaves out."""
    copy = tmp_path / "audit.sqlite"
    shutil.copyfile(fixture.ledger, copy)
    _refereed_padding(copy, fixture)
    bare = _invoke(["report", str(copy), "--json"])
    assert json.loads(bare.stdout)["referee"]["runs"] == REFEREED  # unanchored, they are read
    conn = sqlite3.connect(copy)
    (first,) = conn.execute("SELECT record_hash FROM runs WHERE seq = 6").fetchone()
    conn.close()
    seen = _invoke(_anchored(["report", str(copy), "--json"], fixture))
    assert seen.code == 2 and not seen.stdout, seen.stdout
    problem = _problem(seen.stderr)
    assert f"record 6 ({first[:12]}…) comes after the anchor, which pins records 1-5" in problem
    assert problem.endswith("(--anchored-prefix)"), problem
    prefix = _invoke(_prefixed(["report", str(copy), "--json"], fixture))
    assert prefix.code == 0, prefix.stderr
    data = json.loads(prefix.stdout)
    assert "referee" not in data, data.get("referee")
    assert data["anchor"]["unanchored"] == {"records": REFEREED, "first": 6, "last": 15}


@pytest.mark.parametrize("how", ["copy", "hard link"])
def test_the_same_ledger_twice_is_refused_by_what_it_holds(
    fixture: Fixture, tmp_path: Path, how: str
) -> None:
    """Fails if `stats L COPY` (or a hard link) pools one ledger with itself, counting every
    run twice with identical record hashes (tried by hand: only the same path was refused,
    and the intervals came out too tight)."""
    twin = tmp_path / "twin.sqlite"
    if how == "copy":
        shutil.copyfile(fixture.ledger, twin)
    else:
        twin.hardlink_to(fixture.ledger)
    seen = _invoke(["stats", str(fixture.ledger), str(twin), "--bootstrap", "20"])
    assert seen.code == 2, seen.stdout
    assert "holds the same ledger as" in " ".join(seen.stderr.split()), seen.stderr


PHYSICAL = ("lying_index", "trigger", "view", "foreign_index")
"""Tamperings of the file's form rather than its rows: kaudit's writer and `ledger head`
(the head an operator signs) must refuse them too, not only the readers."""


@pytest.mark.parametrize("tamper", PHYSICAL)
def test_ledger_head_and_a_resume_refuse_a_file_with_a_foreign_form(
    tamper: str, fixture: Fixture, tmp_path: Path
) -> None:
    """Fails if `ledger head` prints (and so lets an operator sign) the head of a file whose
    index hides rows or whose trigger deletes them (tried by hand: with the lying index it
    printed the head, exit 0), or if a resumed `run` appends to it; each must name the
    problem `ledger verify` names first."""
    from tests.conftest import FIXTURES

    copy = tmp_path / "audit.sqlite"
    shutil.copyfile(fixture.ledger, copy)
    TAMPERS[tamper][0](copy, fixture)
    before = copy.read_bytes()
    problem = _problem(_invoke(["ledger", "verify", str(copy)]).stderr)
    suite = str(FIXTURES / "mini_suite")
    for args in (
        ["ledger", "head", str(copy)],
        ["ledger", "head", str(copy), "--json", "--sign-key", str(fixture.folder / "sign.pem")],
        ["run", "--suite", suite, "--k", "4", "--ledger", str(copy)],
    ):
        seen = _invoke(args)
        assert seen.code == 2 and not seen.stdout.strip(), (args, seen)
        assert _problem(seen.stderr) == problem, (args, seen.stderr)
    assert copy.read_bytes() == before


def test_the_gate_denies_on_the_padding_but_lists_only_what_the_anchor_pins(
    fixture: Fixture, baseline: dict[tuple[str, bool], Seen], tmp_path: Path
) -> None:
    """The gate reads leniently (it denies on a failed check and still lists what else
    fails), so records past the anchor must not reach the reasons it lists. Fails if the
    lenient read fell back to every row unverified on a `PastAnchorError` (the padding's
    clean runs then counted: more runs, other cells' reasons)."""
    copy = tmp_path / "audit.sqlite"
    shutil.copyfile(fixture.ledger, copy)
    _padding(copy, fixture)
    seen = _invoke(_anchored(_readers(copy, fixture)["gate"], fixture))
    assert seen.code == 2 and "comes after the anchor" in seen.stdout + seen.stderr
    denied, clean = json.loads(seen.stdout), json.loads(baseline["gate", True].stdout)
    assert denied["runs"] == clean["runs"]
    assert [r for r in denied["reasons"] if "after the anchor" not in json.dumps(r)] == [
        r for r in clean["reasons"]
    ]


def test_an_export_of_the_anchored_prefix_ends_with_the_anchors_head(
    fixture: Fixture, baseline: dict[tuple[str, bool], Seen], tmp_path: Path
) -> None:
    """The head line an export ends with is the line an operator keeps. Fails if, in the
    anchored prefix, it named the file's head: keeping it would adopt the records after
    the anchor, which nothing vouches for and the export left out."""
    copy = tmp_path / "audit.sqlite"
    shutil.copyfile(fixture.ledger, copy)
    _padding(copy, fixture)
    for reader in ("export", "ledger_export"):
        seen = _invoke(_prefixed(_readers(copy, fixture)[reader], fixture))
        kept = seen.stderr.strip().splitlines()[-1]
        assert seen.code == 0 and kept.startswith("ledger head: "), (reader, seen.stderr)
        assert kept == baseline[reader, True].stderr.strip().splitlines()[-1], reader
