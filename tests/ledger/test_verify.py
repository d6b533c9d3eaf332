"""Verification: hashes, links, indexed columns, and anchors kept outside the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.errors import LedgerError
from kaudit.ledger import Anchor, ledger_head, verify_ledger
from kaudit.ledger._anchor import parse_anchor
from kaudit.ledger._sign import generate_keypair, sign_anchor
from tests.ledger.conftest import execute, rechain

runner = CliRunner()


def test_truncation_passes_a_bare_verify_but_not_the_anchor(ledger_path: Path) -> None:
    """Without the anchor check, deleting the tail leaves a chain that verifies."""
    anchor = ledger_head(ledger_path)
    assert anchor.records == 4
    execute(ledger_path, "DELETE FROM runs WHERE seq > 2")
    assert verify_ledger(ledger_path).records == 2  # the remaining chain is intact
    with pytest.raises(LedgerError, match="truncated: the anchor's record 4 is missing"):
        verify_ledger(ledger_path, anchor)


def test_a_rewritten_and_rechained_ledger_fails_its_anchor(ledger_path: Path) -> None:
    """An anchor compared by count only (or not at all) would accept the recomputed chain."""
    anchor = ledger_head(ledger_path)
    execute(
        ledger_path,
        "UPDATE runs SET record = replace(record, '\"counts_as_damage\":true', "
        "'\"counts_as_damage\":false'), counts_as_damage = 0",
    )
    rechain(ledger_path)
    verify_ledger(ledger_path)  # the chain alone is consistent again
    with pytest.raises(LedgerError, match="the chain was rewritten"):
        verify_ledger(ledger_path, anchor)


def test_a_bare_head_hex_must_still_be_in_the_chain(ledger_path: Path) -> None:
    """A hex anchor is looked up anywhere in the chain; a missing one is caught."""
    head = ledger_head(ledger_path).head
    assert verify_ledger(ledger_path, parse_anchor(head)).anchored
    execute(ledger_path, "DELETE FROM runs WHERE seq = 4")
    with pytest.raises(LedgerError, match="is not in the chain"):
        verify_ledger(ledger_path, parse_anchor(head))


def test_an_anchor_taken_earlier_pins_its_prefix_after_more_runs(tmp_path: Path) -> None:
    """Appending is what a ledger is for: an old anchor must keep matching its position,
    and read as the anchored prefix it verifies. Fails if the records appended since
    pass it unnoticed (nothing outside the file vouches for them: it must name the
    first), or if the prefix read stops matching the old anchor."""
    from kaudit.ledger import PastAnchorError
    from tests.ledger.conftest import run_ledger

    path = run_ledger(tmp_path / "l.sqlite", k=2)
    early = ledger_head(path)
    run_ledger(path, k=5)
    assert ledger_head(path).records == 5
    with pytest.raises(PastAnchorError, match=r"record 3 \(\w{12}…\) comes after the anchor"):
        verify_ledger(path, early)
    prefix = verify_ledger(path, early, anchored_prefix=True)
    assert (prefix.records, prefix.anchored_records) == (5, 2)


def test_an_edited_run_index_is_caught_though_every_hash_holds(ledger_path: Path) -> None:
    """Resume reads the run_index column; an unchecked column makes it re-run a finished key."""
    execute(ledger_path, "UPDATE runs SET run_index = 1000 WHERE seq = 4")
    with pytest.raises(LedgerError, match="record 4: column run_index is 1000 but the hashed"):
        verify_ledger(ledger_path)


def test_resume_refuses_a_ledger_with_an_edited_column(ledger_path: Path) -> None:
    """Before, the edited key was re-run and the cell ended with n = k + 1."""
    execute(ledger_path, "UPDATE runs SET run_index = 1000 WHERE seq = 4")
    from tests.conftest import FIXTURES

    args = ["run", "--suite", str(FIXTURES / "mini_suite"), "--k", "4"]
    result = runner.invoke(app, [*args, "--ledger", str(ledger_path)])
    assert result.exit_code == 2
    assert "column run_index is 1000" in result.stderr


def test_a_signed_head_catches_a_rewrite_with_a_new_anchor(
    ledger_path: Path, tmp_path: Path
) -> None:
    """Whoever rewrites the chain can recompute an anchor, but cannot sign it."""
    key, pub = tmp_path / "k.pem", tmp_path / "k.pem.pub"
    generate_keypair(key, pub)
    signed = sign_anchor(ledger_head(ledger_path), key)
    assert verify_ledger(ledger_path, signed, pub).signed
    execute(ledger_path, "UPDATE runs SET record = replace(record, '\"seed\":', '\"seed\": ')")
    rechain(ledger_path)
    forged = ledger_head(ledger_path)  # the attacker's own, unsigned, matching anchor
    with pytest.raises(LedgerError, match="no signature"):
        verify_ledger(ledger_path, forged, pub)
    other_key, other_pub = tmp_path / "o.pem", tmp_path / "o.pem.pub"
    generate_keypair(other_key, other_pub)
    with pytest.raises(LedgerError, match="forged or altered"):
        verify_ledger(ledger_path, sign_anchor(forged, other_key), pub)
    with pytest.raises(LedgerError, match="the chain was rewritten"):
        verify_ledger(ledger_path, signed, pub)


def test_a_signature_does_not_transfer_to_another_count(ledger_path: Path, tmp_path: Path) -> None:
    """Signing only the head hash would let a truncated anchor keep the signature."""
    key, pub = tmp_path / "k.pem", tmp_path / "k.pem.pub"
    generate_keypair(key, pub)
    signed = sign_anchor(ledger_head(ledger_path), key)
    moved = Anchor(records=signed.records - 1, head=signed.head, signature=signed.signature)
    with pytest.raises(LedgerError, match="forged or altered"):
        verify_ledger(ledger_path, moved, pub)


def test_keygen_never_overwrites_a_key(tmp_path: Path) -> None:
    """Overwriting would orphan every anchor signed with the old key."""
    key = tmp_path / "k.pem"
    generate_keypair(key, tmp_path / "k.pub")
    before = key.read_bytes()
    with pytest.raises(LedgerError, match="already exists"):
        generate_keypair(key, tmp_path / "other.pub")
    assert key.read_bytes() == before
    assert key.stat().st_mode & 0o777 == 0o600


def test_cli_head_json_signed_round_trips_through_verify(ledger_path: Path, tmp_path: Path) -> None:
    """The JSON `ledger head --json` prints must be accepted by `verify --head` as a file."""
    key = tmp_path / "audit.pem"
    assert runner.invoke(app, ["ledger", "keygen", str(key)]).exit_code == 0
    head = runner.invoke(
        app, ["ledger", "head", str(ledger_path), "--json", "--sign-key", str(key)]
    )
    assert head.exit_code == 0, head.output
    data = json.loads(head.stdout)
    assert data["records"] == 4 and len(data["head"]) == 64 and len(data["signature"]) == 128
    anchor_file = tmp_path / "audit.head.json"
    anchor_file.write_text(head.stdout)
    pub = f"{key}.pub"
    ok = runner.invoke(
        app, ["ledger", "verify", str(ledger_path), "--head", str(anchor_file), "--pubkey", pub]
    )
    assert ok.exit_code == 0, ok.output
    assert ok.stdout.strip() == "4 records, hash chain intact and matches its signed anchor"
    as_json = runner.invoke(app, ["ledger", "verify", str(ledger_path), "--json"])
    assert json.loads(as_json.stdout) == {
        "records": 4,
        "head": data["head"],
        "anchored": False,
        "signed": False,
    }
    execute(ledger_path, "DELETE FROM runs WHERE seq > 3")
    bad = runner.invoke(app, ["ledger", "verify", str(ledger_path), "--head", head.stdout])
    assert bad.exit_code == 2
    assert "truncated: the anchor's record 4 is missing" in bad.stderr


def test_run_and_export_end_with_the_same_head(ledger_path: Path) -> None:
    """Both must print the anchor `ledger head` gives, so it can be copied from either."""
    head = runner.invoke(app, ["ledger", "head", str(ledger_path)]).stdout.strip()
    anchor = ledger_head(ledger_path)
    assert head == f"ledger head: 4 records, head {anchor.head}"
    exported = runner.invoke(app, ["ledger", "export", str(ledger_path)])
    assert exported.stderr.strip().splitlines()[-1] == head
    from tests.conftest import FIXTURES

    args = ["run", "--suite", str(FIXTURES / "mini_suite"), "--k", "4"]
    rerun = runner.invoke(app, [*args, "--ledger", str(ledger_path)])
    assert rerun.stderr.strip().splitlines()[-1] == head


def test_a_rechained_record_that_is_not_a_run_record_fails_verify(ledger_path: Path) -> None:
    """Verify and the readers agree on what a record is: report refuses it, so must verify.

    Fails if `ledger verify` checked only hashes and columns (as before), passing a chain
    that `kaudit report` then refuses.
    """
    execute(ledger_path, "UPDATE runs SET record = replace(record, '\"seed\":', "
            "'\"surprise\":1,\"seed\":') WHERE seq = 3")  # fmt: skip
    rechain(ledger_path)
    message = "record 3 is not a run record (surprise: Extra inputs are not permitted)"
    with pytest.raises(LedgerError, match=message.replace("(", r"\(").replace(")", r"\)")):
        verify_ledger(ledger_path)
    result = runner.invoke(app, ["ledger", "verify", str(ledger_path)])
    assert result.exit_code == 2 and message in result.stderr
