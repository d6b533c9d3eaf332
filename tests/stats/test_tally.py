from __future__ import annotations

import math

import pytest

from kaudit.stats import CellTally, merge_tallies


def test_counts_outside_zero_to_n_raise() -> None:
    with pytest.raises(ValueError, match="damage=9 is outside"):
        CellTally("m", "t", 8, 9, 9, 0)
    with pytest.raises(ValueError, match="success=-1"):
        CellTally("m", "t", 8, 0, 0, -1)
    with pytest.raises(ValueError, match="negative"):
        CellTally("m", "t", -1, 0, 0, 0)


def test_upper_label_cannot_count_less_damage() -> None:
    with pytest.raises(ValueError, match="damage_upper=1 is below damage=2"):
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
