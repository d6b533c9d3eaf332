"""`Usage`: the one value model usage travels in, summed with `+` from zero."""

from __future__ import annotations

from dataclasses import asdict, fields

from hypothesis import given
from hypothesis import strategies as st

from kaudit import Usage

COUNTS = st.integers(min_value=0, max_value=10**9)
AMOUNTS = st.floats(min_value=0, max_value=1e6, allow_nan=False)
USAGES = st.builds(
    Usage,
    input_tokens=COUNTS,
    output_tokens=COUNTS,
    cost_usd=AMOUNTS,
    retries=COUNTS,
    api_calls=COUNTS,
    model_ms=AMOUNTS,
)


@given(USAGES, USAGES)
def test_a_sum_adds_every_field(a: Usage, b: Usage) -> None:
    """Fails if `+` forgets a field (a run's retries, or its model time, would then drop
    out of the record whenever two doors' evidence merges), including one added later:
    the fields are read from the class, not listed here."""
    total = a + b
    for f in fields(Usage):
        assert getattr(total, f.name) == getattr(a, f.name) + getattr(b, f.name), f.name


@given(USAGES)
def test_zero_is_the_sum_of_nothing(usage: Usage) -> None:
    """Fails if `Usage()` is not zero in every field (a run that made no call would then
    report some), or if adding it changes a value."""
    assert set(asdict(Usage()).values()) == {0}
    assert Usage() + usage == usage == usage + Usage()


def test_tokens_are_input_and_output() -> None:
    """Fails if a token budget counted only one side of the calls."""
    assert Usage(input_tokens=40, output_tokens=7, retries=3).tokens == 47


def test_adding_something_else_is_refused() -> None:
    """Fails if `Usage() + 1` quietly produced a value instead of a TypeError."""
    try:
        Usage() + 1  # type: ignore[operator]
    except TypeError:
        return
    raise AssertionError("Usage() + 1 did not raise")
