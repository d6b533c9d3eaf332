"""Property tests: no truncation or edit of a ledger, re-chained or not, passes its anchor."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.errors import LedgerError
from kaudit.ledger import Ledger, ledger_head, verify_ledger
from tests.ledger.conftest import rechain
from tests.ledger.test_store import record


def written(directory: Path, damage: list[bool]) -> Path:
    path = directory / "l.sqlite"
    with Ledger(path) as ledger:
        for i, hit in enumerate(damage):
            ledger.append(record(i, damage=hit))
    return path


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=8), st.data())
def test_any_truncation_fails_the_anchor(damage: list[bool], data: st.DataObject) -> None:
    """Comparing only hashes that are still present would accept a shorter chain."""
    keep = data.draw(st.integers(0, len(damage) - 1))
    with tempfile.TemporaryDirectory() as tmp:
        path = written(Path(tmp), damage)
        anchor = ledger_head(path)
        with sqlite3.connect(path) as conn:
            conn.execute("DELETE FROM runs WHERE seq > ?", (keep,))
        assert verify_ledger(path).records == keep
        with pytest.raises(LedgerError, match=f"truncated: the anchor's record {len(damage)}"):
            verify_ledger(path, anchor)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=8), st.data(), st.booleans())
def test_any_flipped_verdict_fails_verify_or_the_anchor(
    damage: list[bool], data: st.DataObject, recompute: bool
) -> None:
    """An edit is caught by the chain; an edit with a recomputed chain by the anchor.

    Both damage flags flip together, as a forger keeping the record consistent would
    flip them (one alone is refused as a record whose flags disagree)."""
    seq = data.draw(st.integers(1, len(damage)))
    old = "true" if damage[seq - 1] else "false"
    new = "false" if damage[seq - 1] else "true"
    with tempfile.TemporaryDirectory() as tmp:
        path = written(Path(tmp), damage)
        anchor = ledger_head(path)
        with sqlite3.connect(path) as conn:
            conn.execute(
                "UPDATE runs SET record = replace(replace(record, ?, ?), ?, ?), "
                "counts_as_damage = ?, counts_as_damage_upper = ? WHERE seq = ?",
                (f'"counts_as_damage":{old}', f'"counts_as_damage":{new}',
                 f'"counts_as_damage_upper":{old}', f'"counts_as_damage_upper":{new}',
                 new == "true", new == "true", seq),
            )  # fmt: skip
        if recompute:
            rechain(path)
            verify_ledger(path)  # consistent again, on its own
        with pytest.raises(LedgerError):
            verify_ledger(path, anchor)
