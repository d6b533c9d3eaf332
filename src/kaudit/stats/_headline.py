"""Which ICC estimate to lead with: the one that is right for the pool's cell sizes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ._betabinom import MleFit, MomentsFit

__all__ = ["IccHeadline", "icc_headline"]

Estimator = Literal["moments", "anova", "mle"]


@dataclass(frozen=True)
class IccHeadline:
    """The ICC a reader should take away, and why that estimator.

    Attributes:
        estimator: ``moments``, ``anova`` or ``mle`` (the `StatsSummary` field it comes from).
        icc: Its value; ``None`` when not identified.
        reason: Why it leads, in a few words.
    """

    estimator: Estimator
    icc: float | None
    reason: str

    def to_json(self) -> dict[str, Any]:
        """`{"estimator", "icc", "reason"}` under ``beta_binomial.headline``."""
        return {"estimator": self.estimator, "icc": self.icc, "reason": self.reason}


def icc_headline(
    n: Sequence[int], moments: MomentsFit, anova: float | None, mle: MleFit
) -> IccHeadline:
    """Moments when every cell has the same n, else maximum likelihood (ANOVA if ML is undefined).

    The moment identity ``Var(p̂) = μ(1 − μ)/n · (1 + (n − 1)ρ)`` holds for cells of one
    size; with unequal cells AgentRelBench's estimator puts the mean size n̄ in for n and
    is biased, while the one-way ANOVA estimator (Fleiss, Levin & Paik 2003) and the
    likelihood (Griffiths 1973) account for each cell's n.
    """
    sizes = {size for size in n if size > 0}
    if len(sizes) <= 1:
        return IccHeadline("moments", moments.icc, "equal cells: the moment identity is exact")
    if mle.icc is not None:
        return IccHeadline("mle", mle.icc, "cells differ in size: maximum likelihood")
    return IccHeadline("anova", anova, "cells differ in size: one-way ANOVA")
