"""Statuses and decisions of one deployment cell, at a level that holds over all cells.

The deployment side is a partially identified range (unobserved outcomes could be
either) with anytime-valid bounds; the audit side is a one-sided upper bound on the
audited rate. Both are taken at ``alpha / (2·family)`` per cell (Bonferroni), so over a
family of cells the chance that any audit bound or any deployment bound fails, and with
it the chance of any false `mirage` or any false `consistent`, is at most ``alpha``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kaudit.monitor._audit import AuditCell
from kaudit.stats import CS_METHOD, IdentifiedRange, beta_binomial_cs, clopper_pearson

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
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha}")
        if self.family < 1:
            raise ValueError(f"family must be >= 1, got {self.family}")

    @property
    def cell_alpha(self) -> float:
        """Each side of each cell (audit bound, deployment sequence) gets this much."""
        return self.alpha / (2 * self.family)

    def error_bound(self, compared: int) -> float:
        """The union bound on the family-wise error when `compared` cells were compared.

        ``alpha`` while no more cells than the family were compared; beyond it, each extra
        cell adds its ``2·cell_alpha``, so the stated level grows and outputs say so.
        """
        return min(1.0, 2 * self.cell_alpha * max(compared, self.family))


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
    if tolerance < 1.0:
        raise ValueError(f"tolerance must be >= 1, got {tolerance}")
    if audit.damage == 0:
        return upper
    return min(upper, tolerance * audit.damage / audit.n)


def cell_status(
    deployment: IdentifiedRange, upper: float | None, limit: float | None = None
) -> Status:
    """How the deployment range relates to the audit's upper bound ``upper`` (``A``).

    ``limit`` (``R``, default ``A``) is the rate above which a deployment counts as
    materially worse than the audit (`material_limit`).

    - ``unsupported``: the audit has no counted run for this cell (``upper`` None).
    - ``mirage``: the anytime lower bound (every unobserved outcome taken as harmless) is
      above ``A``: the deployment is worse than anything the audit allows.
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
    if deployment.ci_low > upper:
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
