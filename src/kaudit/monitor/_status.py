"""Statuses and decisions of one deployment cell, at a level that holds over all cells.

Two claims, each family-wise at ``alpha`` (Bonferroni over the family's cells):

- `mirage`, the alarm, is the difference test (`MirageTest`): the audit's exact p-value
  and the deployment's anytime-valid one combined, each cell at ``alpha / family``, so
  the chance of any false alarm over the family, at any event, is at most ``alpha``;
- `consistent` and the deploy/hold decision rest on bounds: the deployment's partially
  identified range (unobserved outcomes could be either) with anytime-valid bounds, and
  a one-sided upper bound on the audited rate, each at ``alpha / (2·family)``, so the
  chance that any of them fails, and with it any false `consistent`, is at most ``alpha``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kaudit._require import require_at_least, require_probability
from kaudit.monitor._audit import AuditCell
from kaudit.stats import beta_binomial_cs, clopper_pearson
from kaudit.stats._sequence import CS_METHOD, IdentifiedRange

Status = Literal["mirage", "consistent", "inconclusive", "unidentified", "unsupported"]
Decision = Literal["deploy", "hold", "cannot_determine"]


@dataclass(frozen=True)
class FamilyLevel:
    """How the monitor's error rate ``alpha`` is spread over a family of cells.

    Attributes:
        alpha: The deployment-level error rate: the chance of any false `mirage` or any
            false `consistent` over the whole family, at every look.
        family: Cells the rate is shared by (Bonferroni over the family).
    """

    alpha: float
    family: int

    def __post_init__(self) -> None:
        require_probability("alpha", self.alpha)
        require_at_least("family", self.family, 1)

    @property
    def cell_alpha(self) -> float:
        """Each side of each cell's bounds (audit bound, deployment sequence) gets this much."""
        return self.alpha / (2 * self.family)

    @property
    def mirage_alpha(self) -> float:
        """Each cell's difference test (`MirageTest`) gets this much: ``alpha / family``."""
        return self.alpha / self.family

    def error_bound(self, compared: int) -> float:
        """The union bound on each family-wise error when `compared` cells were compared.

        ``alpha`` while no more cells than the family were compared; beyond it, each extra
        cell adds its share ``alpha / family``, so the stated level grows and outputs say so.
        It bounds the chance of any false mirage, and apart from it that of any false
        consistent.
        """
        return min(1.0, self.mirage_alpha * max(compared, self.family))


def audit_upper(audit: AuditCell, alpha: float) -> float:
    """One-sided (1 − alpha) upper bound on the audited damage rate.

    Exact Clopper-Pearson one-sided (the upper end of the two-sided 1 − 2·alpha interval)
    for a fixed-k cell; for a sequentially stopped one, the upper end of the anytime-valid
    confidence sequence at alpha (valid at the data-dependent n at which it stopped; a
    two-sided sequence read one-sided, so conservative).
    """
    if audit.interval == CS_METHOD:
        return beta_binomial_cs(audit.damage, audit.n, alpha)[1]
    return clopper_pearson(audit.damage, audit.n, min(2 * alpha, 0.999))[1]


TOLERANCE = 2.0
"""A deployment rate more than this many times the audited rate is *materially* above it."""


def material_limit(audit: AuditCell, upper: float, tolerance: float = TOLERANCE) -> float:
    """The rate ``R`` a `consistent` cell's deployment is shown to stay under.

    ``min(A, tolerance·p̂_audit)``: a rate is materially above the audit's when it is above
    what the audit allows (``A``) or more than ``tolerance`` times what the audit saw.
    An audit that saw no damage has no multiple to offer, so ``R = A`` there.
    """
    require_at_least("tolerance", tolerance, 1)
    if audit.damage == 0:
        return upper
    return min(upper, tolerance * audit.damage / audit.n)


def cell_status(
    deployment: IdentifiedRange,
    upper: float | None,
    limit: float | None = None,
    *,
    mirage: bool = False,
) -> Status:
    """How the deployment relates to the audit.

    ``mirage`` says whether the difference test (`MirageTest`, on the observed harms,
    every unobserved outcome taken as harmless) has shown the deployment's rate above the
    audited rate. ``upper`` (``A``) is the audit's one-sided upper bound and ``limit``
    (``R``, default ``A``) the rate above which a deployment counts as materially worse
    than the audit (`material_limit`).

    - ``unsupported``: the audit has no counted run for this cell (``upper`` None).
    - ``mirage``: the difference test rejected "deployment rate <= audited rate", even
      with every unobserved outcome harmless: the deployment is worse than the audit.
    - ``consistent``: the anytime upper bound (every unobserved outcome taken as a harm)
      is at or below ``R``: the data exclude every rate materially above the audit's.
    - ``unidentified``: neither, and unobserved outcomes put the upper end of the
      identified range above ``R``: the missing outcomes decide, the data cannot.
    - ``inconclusive``: neither, with every outcome that could decide observed: more
      events are needed before either claim can be made.
    """
    if upper is None:
        return "unsupported"
    within = upper if limit is None else limit
    if mirage:
        return "mirage"
    if deployment.ci_high <= within:
        return "consistent"
    if deployment.unobserved > 0 and deployment.upper > within:
        return "unidentified"
    return "inconclusive"


def cell_decision(deployment: IdentifiedRange, threshold: float) -> Decision:
    """Deploy, hold or cannot tell, against a harm-rate threshold, from deployment alone.

    ``deploy`` needs the anytime-valid upper bound of the *upper* series (every unobserved
    outcome counted as a harm) at or below the threshold, so a group whose outcomes are
    mostly unobserved can never pass; ``hold`` needs the lower series' lower bound above
    it; anything between is ``cannot_determine``.
    """
    if deployment.ci_high <= threshold:
        return "deploy"
    if deployment.ci_low > threshold:
        return "hold"
    return "cannot_determine"
