"""One `Report` for `kaudit report` and `kaudit stats`: two views of one value.

`kaudit.read` fills the cells view and `kaudit.summarize` the stats view; what both
stand on (verification, the anchor) is held once and rendered the same in each.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import kaudit
from kaudit.errors import KauditError
from kaudit.ledger import Ledger, ledger_head
from tests.report.conftest import make_record


@pytest.fixture
def anchored(tmp_path: Path) -> tuple[Path, kaudit.ledger.Anchor]:
    """Four runs under an anchor, then two more past it (which no view may count)."""
    path = tmp_path / "audit.sqlite"
    with Ledger(path) as store:
        for i in range(4):
            store.append(make_record("t", i, damage=i == 0))
    head = ledger_head(path)
    with Ledger(path) as store:
        for i in range(4, 6):
            store.append(make_record("t", i, damage=True))
    return path, head


def test_each_builder_fills_its_own_view_and_renders_it_by_default(
    anchored: tuple[Path, kaudit.ledger.Anchor],
) -> None:
    """Fails if a builder's report renders the other command's view by default (the
    CLI's `--json` would print the wrong document), or if naming the view changes what
    is rendered."""
    path, _ = anchored
    read = kaudit.read(path)
    pooled = kaudit.summarize([path], bootstrap=10)
    assert (read.views, pooled.views) == (("cells",), ("stats",))
    assert read.to_text() == read.to_text(view="cells")
    assert read.to_text().startswith("6 runs, 0 invalid")
    assert pooled.to_json() == pooled.to_json(view="stats")
    assert "audit_miss_rate" in pooled.to_json() and "stopping_rules" not in pooled.to_json()
    assert "stopping_rules" in read.to_json() and "audit_miss_rate" not in read.to_json()


def test_a_view_the_report_does_not_hold_names_the_call_that_builds_it(
    anchored: tuple[Path, kaudit.ledger.Anchor],
) -> None:
    """Fails if a missing section renders as empty tables (a pooled report asked for its
    campaign cells would print "0 runs") instead of a one-line error, or if an unknown
    view name is taken for a known one."""
    path, _ = anchored
    read = kaudit.read(path)
    pooled = kaudit.summarize([path], bootstrap=10)
    with pytest.raises(KauditError, match=r"no stats view: build it with kaudit\.summarize"):
        read.to_json(view="stats")
    with pytest.raises(KauditError, match=r"no cells view: build it with kaudit\.read"):
        pooled.to_text(view="cells")
    with pytest.raises(KauditError, match=r"no cells view: build it with kaudit\.read"):
        _ = pooled.cells
    with pytest.raises(KauditError, match=r"no cells view"):
        pooled.economics()
    with pytest.raises(KauditError, match=r"no cells view"):
        pooled.write_html(path.with_suffix(".html"))
    assert not path.with_suffix(".html").exists()
    with pytest.raises(KauditError, match=r"`view` must be one of cells, stats, got 'pool'"):
        read.to_text(view="pool")  # type: ignore[arg-type]


def test_both_views_state_the_same_anchor_from_the_one_evidence(
    anchored: tuple[Path, kaudit.ledger.Anchor],
) -> None:
    """Fails if either builder leaves out what the anchor pins (tried by hand: dropping
    `anchored_records` from `summarize`'s report, whose JSON then had no `anchor` key)
    or if the two views count past the anchor: given the anchor both refuse the record
    after it, and read through the anchored prefix both count the four it pins."""
    from kaudit.ledger import PastAnchorError

    path, head = anchored
    with pytest.raises(PastAnchorError):
        kaudit.read(path, head=head)
    with pytest.raises(PastAnchorError):
        kaudit.summarize([path], head=head, bootstrap=10)
    with kaudit.open(path, head=head, anchored_prefix=True) as snapshot:
        read = kaudit.read(snapshot)
        pooled = kaudit.summarize([snapshot], bootstrap=10)
    assert read.to_json()["anchor"] == pooled.to_json()["anchor"]
    assert read.to_json()["anchor"]["anchored"] == 4
    assert read.to_json()["runs"] == sum(c.tally.n for c in pooled.pool.cells) == 4  # type: ignore[union-attr]


def test_an_unverified_report_says_so_in_either_view(
    anchored: tuple[Path, kaudit.ledger.Anchor],
) -> None:
    """Fails if a view loses the `--no-verify` note or the JSON's `verified: false`: a
    number from an unchecked chain would then read as a checked one."""
    path, _ = anchored
    read = kaudit.read(path, verify=False)
    pooled = kaudit.summarize([path], verify=False, bootstrap=10)
    assert read.to_text().splitlines()[0] == (
        "note: --no-verify: the ledger's hash chain was not checked"
    )
    assert pooled.to_text().splitlines()[0] == (
        "note: --no-verify: the ledgers' hash chains were not checked"
    )
    assert read.to_json()["verified"] is False and pooled.to_json()["verified"] is False
    assert "verified" not in kaudit.read(path).to_json()
