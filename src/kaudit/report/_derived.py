"""What several sections of one report draw from the same runs, each made once.

The terminal tables and the HTML page both show the sub-label mix, the transcript graders
and the economics of the same runs. Made per section they cost about 0.3 s of a
10,000-run `kaudit report --html` (bench/html_scale.py); a `Report` holds one `Derived`
and hands it to both, so each is made once and both show the same object.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

from kaudit.ledger._summary import RunSummary
from kaudit.ledger._tally import tallies_from_records
from kaudit.report._economics import ModelEconomics, economics
from kaudit.report._grading import GraderResult, grade_transcripts
from kaudit.report._mix import CellMix, cell_mix
from kaudit.stats import CellTally

__all__ = ["Derived"]

_T = TypeVar("_T")


class Derived:
    """Memo of the numbers drawn from one fixed sequence of runs.

    The runs must not change once a `Derived` holds them: a `Report`'s are a tuple.
    Each value is made on first use; the same arguments give the same object again.
    """

    def __init__(self, runs: Sequence[RunSummary]) -> None:
        self.runs = runs
        self._made: dict[Hashable, Any] = {}

    def _once(self, key: Hashable, make: Callable[[], _T]) -> _T:
        if key not in self._made:
            self._made[key] = make()
        value: _T = self._made[key]
        return value

    def tallies(self) -> list[CellTally]:
        """`tallies_from_records` of the runs."""
        return self._once("tallies", lambda: tallies_from_records(self.runs))

    def mix(self) -> list[CellMix]:
        """`cell_mix` of the runs."""
        return self._once("mix", lambda: cell_mix(self.runs))

    def grading(self) -> list[GraderResult]:
        """`grade_transcripts` of the runs."""
        return self._once("grading", lambda: grade_transcripts(self.runs))

    def economics(
        self,
        *,
        alpha: float = 0.05,
        detect: float = 0.95,
        loading: float = 0.5,
        bootstrap: int = 2000,
        seed: int = 0,
    ) -> list[ModelEconomics]:
        """`economics` of the runs with these arguments (its defaults are these)."""
        key = ("economics", alpha, detect, loading, bootstrap, seed)
        return self._once(
            key,
            lambda: economics(
                self.runs,
                alpha=alpha,
                detect=detect,
                loading=loading,
                bootstrap=bootstrap,
                seed=seed,
                tallies=self.tallies(),
            ),
        )
