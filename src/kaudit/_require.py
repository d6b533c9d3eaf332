"""The checks kaudit's calls make of their arguments, each written once.

Every check raises `InputError` naming the argument as the caller passed it, so the
same bad value reads the same wherever it is checked, and the CLI can swap the name
for its flag. Comparisons are written so that NaN fails them: `not 0 < nan < 1`.
"""

from __future__ import annotations

import math

from kaudit.errors import InputError


def require_probability(
    name: str, value: float, *, zero: bool = False, one: bool = False, part: str = ""
) -> float:
    """`value` if it lies in (0, 1); `zero` / `one` admit that end of the interval.

    A level such as `alpha` excludes both ends (a 0 or 100 % interval says nothing);
    a rate that may be certain (`p` of a plan, a fault's rate) admits 1. `part` says
    which piece of a text argument the number came from (`gives x a rate that`).
    """
    low = value >= 0.0 if zero else value > 0.0
    high = value <= 1.0 if one else value < 1.0
    if not (low and high):
        interval = f"{'[' if zero else '('}0, 1{']' if one else ')'}"
        raise InputError(name, f"{part} must be in {interval}, got {value}".lstrip())
    return value


def require_at_least(name: str, value: float, minimum: int) -> None:
    """Check `value >= minimum` (a count of runs, workers or tasks; a loading >= 0)."""
    if not value >= minimum:
        raise InputError(name, f"must be >= {minimum}, got {value}")


def require_tally(count: int, n: int, *, count_name: str = "x", n_name: str = "n") -> None:
    """Check `0 <= count <= n`: a count of runs out of `n` runs, as every bound takes it."""
    if not 0 <= count <= n:
        raise InputError(
            count_name, f"must be in [0, {n_name}], got {count_name}={count}, {n_name}={n}"
        )


def require_seconds(name: str, value: float) -> float:
    """`value` as float seconds if it is a finite number above 0 (a time budget)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(name, f"must be a number of seconds, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise InputError(name, f"must be a finite number of seconds above 0, got {value}")
    return float(value)
