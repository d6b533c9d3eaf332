from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kaudit.report import TextTable, to_text

LONG = "billing/duplicate-payment-refund~distractors"


def test_plain_text_aligns_columns_and_never_cuts_an_id() -> None:
    """Bug caught: ids folded to a fixed width, or numbers left-aligned."""
    table = TextTable("cells", ("task", "n"), ((LONG, "8"), ("a", "12")))
    assert to_text([table]) == (
        "cells\n"
        f"{'task'.ljust(len(LONG))}   n\n"
        f"{'-' * len(LONG)}  --\n"
        f"{LONG}   8\n"
        f"{'a'.ljust(len(LONG))}  12\n"
    )


def test_a_row_with_the_wrong_width_is_refused() -> None:
    """Bug caught: a short row silently shifting every later column."""
    with pytest.raises(ValueError, match="wrong number of cells"):
        TextTable("t", ("a", "b"), (("only",),))


ids = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=60)


@given(st.lists(st.tuples(ids, st.integers(0, 10**6)), min_size=1, max_size=8))
def test_every_id_starts_its_own_line_whole(rows: list[tuple[str, int]]) -> None:
    """Bug caught: any width-dependent folding or cutting of the id column."""
    table = TextTable("t", ("task", "n"), tuple((task, str(n)) for task, n in rows))
    lines = to_text([table]).splitlines()[3:]
    assert len(lines) == len(rows)
    for line, (task, n) in zip(lines, rows, strict=True):
        assert line.startswith(task) and line.endswith(str(n))
