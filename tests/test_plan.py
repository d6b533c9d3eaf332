"""`kaudit.plan`: the three questions `kaudit plan` answers, as one library call."""

from __future__ import annotations

from pathlib import Path

import pytest

import kaudit
from kaudit.errors import KauditError
from kaudit.ledger import Anchor, Ledger, import_files
from kaudit.suites import Suite
from tests.cli.test_stats_cli import verdicts


def test_a_probability_alone_gives_the_geometric_runs() -> None:
    """Bug caught: detect passed as the miss chance (1 - detect swapped), giving 1 run."""
    made = kaudit.plan(0.125, detect=0.95)
    assert (made.mode, made.runs) == ("probability", 23)
    assert made.to_json() == {"runs": 23, "p": 0.125, "detect": 0.95}


def test_sources_give_each_damaging_cell_its_conservative_runs(tmp_path: Path) -> None:
    """Bug caught: the cells planned at their point rate 3/8 (8 runs) instead of the lower
    bound of its interval, or a cell without damage planned at all."""
    a = verdicts(tmp_path, "a", {"t1": (8, 3), "t2": (8, 0)})
    made = kaudit.plan(detect=0.95, model_files=[f"A={a}"])
    assert made.mode == "cells"
    assert [(c.task, c.damage, c.n, c.runs) for c in made.cells] == [("t1", 3, 8, 34)]


def test_a_ledger_prices_the_runs_per_model(mini_suite: Suite, tmp_path: Path) -> None:
    """Bug caught: `tasks` not defaulting to the ledger's tasks, or the chain check lost."""
    ledger = tmp_path / "a.sqlite"
    kaudit.audit(mini_suite, ["reference"], k=2, ledger=ledger)
    made = kaudit.plan(0.1, from_ledger=ledger, concurrency=4)
    (budget,) = made.budgets
    assert made.mode == "budgets" and made.checked is not None
    assert (budget.tasks, budget.runs_per_task, made.checked.records) == (
        len(mini_suite.tasks),
        29,
        2 * len(mini_suite.tasks),
    )

    with kaudit.open(ledger) as snapshot:  # the one verified read, taken as it is
        opened = kaudit.plan(0.1, from_ledger=snapshot, concurrency=4)
    assert opened.budgets == made.budgets


def test_a_decision_on_an_unverified_read_says_why_it_refuses(
    mini_suite: Suite, tmp_path: Path
) -> None:
    """Bug caught: a snapshot read without its chain check was refused as the word 'None'."""
    ledger = tmp_path / "a.sqlite"
    kaudit.audit(mini_suite, ["reference"], k=2, ledger=ledger)
    with kaudit.open(ledger, verify=False) as snapshot:
        refused = kaudit.decide(snapshot, "propose").refused
    assert refused is not None and "not verified" in refused


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"p": 0.1, "detect": 1.0}, "`detect` must be in (0, 1), got 1.0"),
        ({"p": 0.0}, "`p` must be in (0, 1], got 0.0"),
        ({"from_ledger": "x.sqlite"}, "`from_ledger` needs `p`"),
    ],
)
def test_bad_arguments_are_named_in_the_calls_own_terms(
    kwargs: dict[str, object], message: str
) -> None:
    """Bug caught: a bad argument answered with a plan (detect 1 plans infinitely many
    runs) or with a message quoting a command-line flag the caller never typed."""
    with pytest.raises(KauditError) as raised:
        kaudit.plan(**kwargs)  # type: ignore[arg-type]
    assert str(raised.value).startswith(message) and "--" not in str(raised.value)


def _imported(tmp_path: Path) -> tuple[Path, Anchor]:
    """A ledger of model A's verdicts, its head then, and model B's verdicts after it."""
    ledger = tmp_path / "imported.sqlite"
    a = verdicts(tmp_path, "a", {"t1": (8, 3), "t2": (8, 0)})
    b = verdicts(tmp_path, "b", {"t1": (8, 5)})
    with Ledger(ledger) as store:
        import_files(store, [("A", a)])
        head = store.head()
        import_files(store, [("B", b)])
    return ledger, head


def test_ledgers_may_be_snapshots_and_are_read_as_their_paths_are(tmp_path: Path) -> None:
    """Bug caught: a `kaudit.open` snapshot in `ledgers` was turned into its repr and
    refused as "no such ledger file", or read again from its path instead of as it is."""
    ledger, head = _imported(tmp_path)
    by_path = kaudit.plan(ledgers=[ledger])
    with kaudit.open(ledger, head=head) as snapshot:
        by_snapshot = kaudit.plan(ledgers=[snapshot])
        with pytest.raises(KauditError, match="already open"):
            kaudit.plan(ledgers=[snapshot], head=head)
    assert {c.model for c in by_path.cells} == {"A", "B"}
    assert [(c.model, c.task, c.runs) for c in by_snapshot.cells] == [("A", "t1", 34)]


def test_head_anchors_the_one_ledger_of_ledgers(tmp_path: Path) -> None:
    """Bug caught: `head` refused without `from_ledger`, or ignored, so model B's runs
    recorded after the anchor were planned as evidence."""
    ledger, head = _imported(tmp_path)
    anchored = kaudit.plan(ledgers=[ledger], head=head)
    assert [(c.model, c.task, c.runs) for c in anchored.cells] == [("A", "t1", 34)]
    assert [p.model for p in anchored.population] == ["A"]
    with pytest.raises(KauditError, match="exactly one of `ledgers`"):
        kaudit.plan(ledgers=[ledger, tmp_path / "other.sqlite"], head=head)
    with pytest.raises(KauditError, match="none is read"):
        kaudit.plan(0.1, head=head)
