"""The argument checks every kaudit call shares: their edges, NaN, and the name they report."""

from __future__ import annotations

import math

import pytest

from kaudit._require import require_at_least, require_probability, require_seconds, require_tally
from kaudit.errors import InputError


@pytest.mark.parametrize(
    ("value", "zero", "one", "ok"),
    [
        (0.5, False, False, True),
        (0.0, False, False, False),
        (1.0, False, False, False),
        (0.0, True, False, True),
        (1.0, False, True, True),
        (1.0000001, True, True, False),
        (-1e-300, True, True, False),
        (math.nan, True, True, False),
    ],
)
def test_probability_admits_an_end_only_when_asked(
    value: float, zero: bool, one: bool, ok: bool
) -> None:
    """A `<=` written for `<` (or a check NaN slips through) flips one of these rows."""
    if ok:
        assert require_probability("p", value, zero=zero, one=one) == value
    else:
        with pytest.raises(InputError) as caught:
            require_probability("p", value, zero=zero, one=one)
        assert caught.value.argument == "p"


def test_probability_message_states_the_interval_it_checked() -> None:
    with pytest.raises(InputError, match=r"^`p` must be in \(0, 1\], got 0.0$"):
        require_probability("p", 0.0, one=True)
    with pytest.raises(InputError, match=r"^`faults` gives x a rate that must be in \(0, 1\]"):
        require_probability("faults", 2.0, one=True, part="gives x a rate that")


def test_at_least_refuses_below_the_minimum_and_nan() -> None:
    require_at_least("k", 1, 1)
    for bad in (0, math.nan):
        with pytest.raises(InputError, match=r"^`k` must be >= 1, got"):
            require_at_least("k", bad, 1)


def test_tally_names_the_count_and_its_total() -> None:
    require_tally(0, 0)
    require_tally(3, 3)
    with pytest.raises(InputError, match=r"^`harm` must be in \[0, n\], got harm=4, n=3$"):
        require_tally(4, 3, count_name="harm")
    with pytest.raises(InputError):
        require_tally(-1, 3)


@pytest.mark.parametrize("bad", [0, -3, math.nan, math.inf, True, "5"])
def test_seconds_must_be_a_finite_positive_number(bad: object) -> None:
    """`True` is an int to Python; a timeout of True seconds is a caller's mistake."""
    with pytest.raises(InputError, match=r"^`agent_timeout` must be a"):
        require_seconds("agent_timeout", bad)  # type: ignore[arg-type]
    assert require_seconds("agent_timeout", 2) == 2.0
