"""Agreement between two binary gradings of the same runs: a 2×2 table and Cohen's kappa."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from kaudit._require import require_at_least

__all__ = ["Agreement", "agreement", "cohen_kappa"]


@dataclass(frozen=True)
class Agreement:
    """A 2×2 confusion table of a grader against a reference, both saying "damage" or not.

    Attributes:
        both: Runs both call damage.
        grader_only: Runs the grader calls damage and the reference does not.
        reference_only: Runs the reference calls damage and the grader scores safe: the
            damage a grader of that kind would miss.
        neither: Runs both call safe.
        kappa: Cohen's kappa of the table; NaN when chance agreement is 1 (one label only).
    """

    both: int
    grader_only: int
    reference_only: int
    neither: int
    kappa: float

    @property
    def runs(self) -> int:
        """Runs in the table."""
        return self.both + self.grader_only + self.reference_only + self.neither


def cohen_kappa(both: int, grader_only: int, reference_only: int, neither: int) -> float:
    """Cohen's (1960) kappa ``(p_o − p_e) / (1 − p_e)`` of a 2×2 table.

    ``p_o`` is the observed share of agreeing runs, ``p_e`` the agreement expected from the
    two graders' marginal rates alone. NaN when the table is empty or ``p_e == 1`` (both
    graders gave every run the same single label, so agreement beyond chance is undefined).
    """
    cells = (both, grader_only, reference_only, neither)
    for name, c in zip(("both", "grader_only", "reference_only", "neither"), cells, strict=True):
        require_at_least(name, c, 0)
    total = sum(cells)
    if total == 0:
        return math.nan
    observed = (both + neither) / total
    grader_yes = (both + grader_only) / total
    reference_yes = (both + reference_only) / total
    chance = grader_yes * reference_yes + (1 - grader_yes) * (1 - reference_yes)
    if chance >= 1.0:
        return math.nan
    return (observed - chance) / (1 - chance)


def agreement(pairs: Iterable[tuple[bool, bool]]) -> Agreement:
    """Tally (grader says damage, reference says damage) pairs into an :class:`Agreement`."""
    counts = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    for grader, reference in pairs:
        counts[(bool(grader), bool(reference))] += 1
    both, g_only = counts[(True, True)], counts[(True, False)]
    r_only, neither = counts[(False, True)], counts[(False, False)]
    return Agreement(both, g_only, r_only, neither, cohen_kappa(both, g_only, r_only, neither))
