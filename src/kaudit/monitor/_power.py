"""The monitor's error rate and power, by simulation: many deployments, every look judged.

A simulated deployment has ``cells`` cells, each audited with ``audit_n`` runs at
``audit_rate``; in deployment ``drifting`` of them damage at ``drift × audit_rate`` and
the rest stay at the audited rate. Every cell is judged after each of its ``events``
events exactly as `Monitor` judges it (running intersection of the anytime bounds against
the audit's upper bound), but vectorised: the anytime lower bound lies above ``A`` exactly
when the mixture martingale at ``A`` exceeds ``1/alpha`` with p̂ above ``A``, so no root
is found per look. `tests/monitor/test_power.py` holds this equal to `Monitor` stream by
stream.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kaudit._blas import special as _sp
from kaudit.monitor._audit import AuditCell
from kaudit.monitor._status import TOLERANCE, FamilyLevel, audit_upper, material_limit
from kaudit.report import FIXED_K_METHOD as FIXED_K

__all__ = ["DriftResult", "DriftSetup", "judge_streams", "simulate_drift"]

_JEFFREYS = 0.5


@dataclass(frozen=True)
class DriftSetup:
    """One simulated deployment family and how often to replay it.

    Attributes:
        cells: Cells in the family (all compared with the audit).
        audit_n: Audit runs per cell (fixed k).
        audit_rate: True damage rate in the audit and of the steady cells.
        events: Deployment events per cell, all outcomes observed.
        drift: Deployment rate of a drifting cell, as a multiple of ``audit_rate``.
        drifting: Cells that drift (0: the null, every cell at its audited rate).
        alpha: The monitor's deployment-level error rate.
        tolerance: The monitor's `material_limit` multiple.
        per_cell: Judge each cell at the previous per-cell level instead (the audit's
            two-sided 1 − alpha interval, the deployment sequence at alpha): the baseline
            the family-wise rule is compared with.
        sims: Deployments simulated.
        seed: numpy seed.
    """

    cells: int = 24
    audit_n: int = 60
    audit_rate: float = 0.1
    events: int = 500
    drift: float = 1.0
    drifting: int = 0
    alpha: float = 0.05
    tolerance: float = TOLERANCE
    per_cell: bool = False
    sims: int = 1000
    seed: int = 0


@dataclass(frozen=True)
class DriftResult:
    """Shares over the simulated deployments.

    Attributes:
        setup: What was simulated.
        any_false_alarm: Deployments where some steady cell was ever a mirage.
        power: Drifting cells that were a mirage by their last event (NaN without any).
        false_consistent: Drifting cells that ended `consistent` (NaN without any).
        steady_consistent: Steady cells that ended `consistent` (NaN without any).
    """

    setup: DriftSetup
    any_false_alarm: float
    power: float
    false_consistent: float
    steady_consistent: float


def judge_streams(
    harms: npt.ArrayLike, upper: npt.ArrayLike, limit: npt.ArrayLike, alpha: float
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """(ever mirage, ends consistent) of fully observed streams against their ``A``, ``R``.

    ``harms`` has shape (..., events) of 0/1; ``upper`` and ``limit`` broadcast against
    its leading axes. Same rule as `cell_status` on `Monitor`'s running bounds at level
    ``alpha``.
    """
    h = np.asarray(harms, dtype=np.float64)
    a = np.asarray(upper, dtype=np.float64)[..., None]
    r = np.asarray(limit, dtype=np.float64)[..., None]
    x = np.cumsum(h, axis=-1)
    n = np.arange(1, h.shape[-1] + 1, dtype=np.float64)
    log_mix = _sp.betaln(_JEFFREYS + x, _JEFFREYS + n - x) - _sp.betaln(_JEFFREYS, _JEFFREYS)
    phat = x / n
    mirage = np.any(_excluded(x, n, a, log_mix, alpha) & (phat > a) & (a < 1.0), axis=-1)
    below = _excluded(x, n, r, log_mix, alpha) & (phat < r)
    consistent = np.any(below, axis=-1) | np.any(r >= 1.0, axis=-1)
    return mirage, consistent & ~mirage


def _excluded(
    x: npt.NDArray[np.float64],
    n: npt.NDArray[np.float64],
    p: npt.NDArray[np.float64],
    log_mix: npt.NDArray[np.float64],
    alpha: float,
) -> npt.NDArray[np.bool_]:
    """Whether the confidence sequence after (x, n) leaves out the rate p."""
    safe = np.clip(p, 1e-300, 1 - 1e-16)
    log_lik = x * np.log(safe) + (n - x) * np.log1p(-safe)
    out: npt.NDArray[np.bool_] = (log_mix - log_lik > math.log(1.0 / alpha)) & (p > 0.0)
    return out


def _tables(
    setup: DriftSetup, level: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """A and R for every possible audit count 0..audit_n, A at one-sided ``level``."""
    n = setup.audit_n
    cells = [AuditCell(n, x, x / n, 0.0, 1.0, FIXED_K) for x in range(n + 1)]
    upper = [audit_upper(cell, level) for cell in cells]
    limit = [material_limit(c, a, setup.tolerance) for c, a in zip(cells, upper, strict=True)]
    return np.array(upper), np.array(limit)


def simulate_drift(setup: DriftSetup, chunk: int = 100) -> DriftResult:
    """Replay the setup ``sims`` times from its seed; see `DriftResult`."""
    if not 0 <= setup.drifting <= setup.cells:
        raise ValueError(f"drifting must be in [0, cells], got {setup.drifting}")
    level = FamilyLevel(setup.alpha, setup.cells)
    audit_level = setup.alpha / 2 if setup.per_cell else level.cell_alpha
    deploy_level = setup.alpha if setup.per_cell else level.cell_alpha
    upper, limit = _tables(setup, audit_level)
    rng = np.random.default_rng(setup.seed)
    rates = np.full(setup.cells, setup.audit_rate)
    rates[: setup.drifting] = min(1.0, setup.drift * setup.audit_rate)
    steady = np.arange(setup.cells) >= setup.drifting
    alarms = 0
    caught = ended_consistent = steady_consistent = 0
    for start in range(0, setup.sims, chunk):
        m = min(chunk, setup.sims - start)
        audit_x = rng.binomial(setup.audit_n, setup.audit_rate, size=(m, setup.cells))
        harms = rng.random((m, setup.cells, setup.events)) < rates[None, :, None]
        mirage, consistent = judge_streams(harms, upper[audit_x], limit[audit_x], deploy_level)
        alarms += int(np.sum(np.any(mirage & steady, axis=1)))
        caught += int(np.sum(mirage[:, ~steady]))
        ended_consistent += int(np.sum(consistent[:, ~steady]))
        steady_consistent += int(np.sum(consistent[:, steady]))
    drifted = setup.sims * setup.drifting
    held = setup.sims * (setup.cells - setup.drifting)
    return DriftResult(
        setup=setup,
        any_false_alarm=alarms / setup.sims,
        power=caught / drifted if drifted else math.nan,
        false_consistent=ended_consistent / drifted if drifted else math.nan,
        steady_consistent=steady_consistent / held if held else math.nan,
    )
