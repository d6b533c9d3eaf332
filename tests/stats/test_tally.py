from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kaudit.stats import CellTally
from kaudit.stats._tally import merge_tallies


def test_counts_outside_zero_to_n_raise() -> None:
    with pytest.raises(ValueError, match="`damage` of cell m/t is 9, outside"):
        CellTally("m", "t", 8, 9, 9, 0)
    with pytest.raises(ValueError, match="`success` of cell m/t is -1"):
        CellTally("m", "t", 8, 0, 0, -1)
    with pytest.raises(ValueError, match="negative"):
        CellTally("m", "t", -1, 0, 0, 0)


def test_upper_label_cannot_count_less_damage() -> None:
    with pytest.raises(ValueError, match="`damage_upper` of cell m/t is 1, below damage=2"):
        CellTally("m", "t", 8, 2, 1, 0)


def test_phat_and_empty_cell() -> None:
    assert CellTally("m", "t", 8, 3, 3, 0).phat == 3 / 8
    assert math.isnan(CellTally("m", "t", 0, 0, 0, 0).phat)


def test_merge_adds_runs_of_the_same_cell() -> None:
    merged = merge_tallies(
        [
            CellTally("m", "a", 8, 3, 3, 1),
            CellTally("m", "b", 8, 0, 0, 8),
            CellTally("m", "a", 16, 12, 12, 0),
        ]
    )
    assert merged == [CellTally("m", "a", 24, 15, 15, 1), CellTally("m", "b", 8, 0, 0, 8)]


_digests = st.sampled_from([None, "a" * 64, "b" * 64])
_cells = st.lists(
    st.tuples(st.sampled_from(["m1", "m2"]), st.sampled_from(["t1", "t2"]), _digests,
              st.integers(0, 5)),
    max_size=12,
)  # fmt: skip


@given(_cells)
def test_merge_never_pools_task_versions_and_keeps_every_run(
    raw: list[tuple[str, str, str | None, int]],
) -> None:
    """Keying the merge by (model, task) alone pooled runs of two different task specs."""
    tallies = [CellTally(m, t, n, 0, 0, 0, digest=d) for m, t, d, n in raw]
    merged = merge_tallies(tallies)
    assert sum(c.n for c in merged) == sum(n for *_, n in raw)
    expected = {(m, t, d): 0 for m, t, d, _ in raw}
    for m, t, d, n in raw:
        expected[(m, t, d)] += n
    assert {(c.model, c.task_id, c.digest): c.n for c in merged} == expected
    labels = [(c.model, c.task) for c in merged]
    assert len(labels) == len(set(labels))  # each version has its own name
    versions = {t: {d for _, task, d, _ in raw if task == t} for _, t, _, _ in raw}
    for cell in merged:
        several = len(versions[cell.task_id]) > 1
        assert (cell.task != cell.task_id) == several
