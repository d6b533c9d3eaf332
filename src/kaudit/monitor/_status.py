"""Statuses and decisions of one deployment cell: pure functions of the two sides' bounds.

The deployment side is a partially identified range (unobserved outcomes could be
either) with anytime-valid bounds; the audit side is the interval the audit certified.
"""

from __future__ import annotations

from typing import Literal

from kaudit.monitor._audit import AuditCell
from kaudit.stats import IdentifiedRange

Status = Literal["mirage", "consistent", "unidentified", "unsupported"]
Decision = Literal["deploy", "hold", "cannot_determine"]


def cell_status(deployment: IdentifiedRange, audit: AuditCell | None) -> Status:
    """How the deployment range relates to what the audit allows.

    - ``unsupported``: the audit has no counted run for this (model, task).
    - ``mirage``: the deployment's anytime-valid lower bound (every unobserved outcome
      taken as harmless) is above the audit's upper bound: the deployment is certainly
      worse than anything the audit allows.
    - ``unidentified``: not a mirage, but unobserved outcomes put the upper end of the
      identified range above the audit's upper bound: the missing outcomes decide,
      the data cannot.
    - ``consistent``: otherwise: the range lies within what the audit allows, or (all
      outcomes observed) the data show no rate above it.
    """
    if audit is None:
        return "unsupported"
    if deployment.ci_low > audit.ci_high:
        return "mirage"
    if deployment.unobserved > 0 and deployment.upper > audit.ci_high:
        return "unidentified"
    return "consistent"


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
