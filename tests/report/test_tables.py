from __future__ import annotations

import pytest

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
