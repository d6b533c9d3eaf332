"""The monitor's error rate and power, by simulation: many deployments, every look judged.

A simulated deployment has ``cells`` cells, each audited with ``audit_n`` runs at
``audit_rate``; in deployment ``drifting`` of them damage at ``drift × audit_rate`` and
the rest stay at the audited rate. Every cell is judged after each of its ``events``
events exactly as `Monitor` judges it, but vectorised, and on the same draws two other
rules are judged for comparison:

- the **reference**: a non-sequential test of the difference that sees each cell's data
  once, at its last event: Fisher's exact one-sided test at ``alpha / cells``
  (Bonferroni), the most a fixed-sample test can be expected to see;
- the **bounds rule** the monitor had: a mirage when the deployment's anytime lower bound
  clears the audit's one-sided upper bound, each at ``alpha / (2·cells)``.

The difference test's evidence is a convex function of (events, harms), rising with the
harms and falling with the events, so its running maximum over a stream is reached at a
vertex of the upper convex hull of the stream's (event, harm count) points after each
harm; only those are evaluated. `tests/monitor/test_power.py` holds the vectorised rule
equal to `Monitor` stream by stream.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kaudit._blas import special as _sp
from kaudit.errors import InputError
from kaudit.monitor._audit import AuditCell
from kaudit.monitor._difference import MirageTest
from kaudit.monitor._status import TOLERANCE, FamilyLevel, audit_upper, material_limit
from kaudit.report._cells import FIXED_K_METHOD as FIXED_K

__all__ = ["DriftResult", "DriftSetup", "judge_streams", "reference_rejects", "simulate_drift"]

_JEFFREYS = 0.5
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


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
    sims: int = 1000
    seed: int = 0


@dataclass(frozen=True)
class DriftResult:
    """Shares over the simulated deployments, for the monitor and the two other rules.

    Attributes:
        setup: What was simulated.
        any_false_alarm: Deployments where some steady cell was ever a mirage (NaN
            without steady cells).
        power: Drifting cells that were a mirage by their last event (NaN without any).
        reference_power: Drifting cells the reference (Fisher at the end) rejects.
        bounds_power: Drifting cells the old bounds rule called a mirage.
        reference_false_alarm: Deployments where the reference rejects a steady cell.
        bounds_false_alarm: Deployments where the bounds rule ever alarmed on a steady cell.
        false_consistent: Drifting cells that ended `consistent` (NaN without any).
        steady_consistent: Steady cells that ended `consistent` (NaN without any).
    """

    setup: DriftSetup
    any_false_alarm: float
    power: float
    reference_power: float
    bounds_power: float
    reference_false_alarm: float
    bounds_false_alarm: float
    false_consistent: float
    steady_consistent: float


def judge_streams(
    harms: npt.ArrayLike,
    audit_damage: npt.ArrayLike,
    audit_n: int,
    level: FamilyLevel,
    tolerance: float = TOLERANCE,
) -> tuple[BoolArray, BoolArray]:
    """(ever mirage, ends consistent) of fully observed streams, as `Monitor` judges them.

    ``harms`` has shape (streams, events) of 0/1; ``audit_damage`` (streams,) holds each
    stream's audit count out of ``audit_n`` fixed-k runs; ``level`` is the monitor's
    `FamilyLevel`.
    """
    h = np.asarray(harms, dtype=bool)
    damage = np.asarray(audit_damage, dtype=np.int64)
    mirage = _mirages(h, damage, audit_n, level.mirage_alpha)
    _, limit = _tables(audit_n, level.cell_alpha, tolerance)
    x, n, log_mix = _paths(h)
    r = limit[damage][:, None]
    below = _excluded(x, n, r, log_mix, level.cell_alpha) & (x / n < r)
    consistent = np.any(below, axis=-1) | (limit[damage] >= 1.0)
    return mirage, consistent & ~mirage


def _mirages(harms: BoolArray, damage: IntArray, audit_n: int, alpha: float) -> BoolArray:
    """Whether each stream's difference test has rejected by its last event."""
    found = np.zeros(harms.shape[0], dtype=bool)
    for x in np.unique(damage):
        test = MirageTest.for_audit(int(x), audit_n, alpha)
        rows = np.flatnonzero(damage == x)
        if not test.possible:
            continue
        owner, events, counts = _hull_points(harms[rows])
        if owner.size == 0:
            continue
        evidence = test.log_evidence(counts, events)
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        best = np.maximum(np.maximum.reduceat(evidence, starts, axis=0), 0.0)
        found[rows[owner[starts]]] = np.all(best >= test.needed, axis=1)
    return found


def _hull_points(harms: BoolArray) -> tuple[IntArray, FloatArray, FloatArray]:
    """(stream, events, harms) of every vertex of each stream's upper hull of harm points."""
    owners: list[int] = []
    events: list[float] = []
    counts: list[float] = []
    for row, stream in enumerate(harms):
        times = np.flatnonzero(stream) + 1
        for n, x in _upper_hull(times):
            owners.append(row)
            events.append(n)
            counts.append(x)
    return (
        np.asarray(owners, dtype=np.int64),
        np.asarray(events, dtype=np.float64),
        np.asarray(counts, dtype=np.float64),
    )


def _upper_hull(times: npt.NDArray[np.int64]) -> list[tuple[float, float]]:
    """Andrew's monotone chain, upper half, over the points (times[k], k + 1)."""
    hull: list[tuple[float, float]] = []
    for k, n in enumerate(times.tolist()):
        point = (float(n), float(k + 1))
        while len(hull) >= 2 and _turn(hull[-2], hull[-1], point) >= 0:
            hull.pop()
        hull.append(point)
    return hull


def _turn(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _paths(h: BoolArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Cumulative harms, event counts and the Jeffreys mixture's log marginal per look."""
    x = np.cumsum(h, axis=-1, dtype=np.float64)
    n = np.arange(1, h.shape[-1] + 1, dtype=np.float64)
    log_mix = _sp.betaln(_JEFFREYS + x, _JEFFREYS + n - x) - _sp.betaln(_JEFFREYS, _JEFFREYS)
    return x, n, log_mix


def _excluded(
    x: FloatArray, n: FloatArray, p: FloatArray, log_mix: FloatArray, alpha: float
) -> BoolArray:
    """Whether the confidence sequence after (x, n) leaves out the rate p."""
    safe = np.clip(p, 1e-300, 1 - 1e-16)
    log_lik = x * np.log(safe) + (n - x) * np.log1p(-safe)
    out: BoolArray = (log_mix - log_lik > math.log(1.0 / alpha)) & (p > 0.0)
    return out


def _bounds_mirages(harms: BoolArray, damage: IntArray, audit_n: int, alpha: float) -> BoolArray:
    """The old rule: the deployment's anytime lower bound ever above the audit's bound."""
    upper, _ = _tables(audit_n, alpha, TOLERANCE)
    a = upper[damage][:, None]
    x, n, log_mix = _paths(harms)
    hit = _excluded(x, n, a, log_mix, alpha) & (x / n > a) & (a < 1.0)
    return np.asarray(np.any(hit, axis=-1), dtype=bool)


def reference_rejects(
    audit_damage: npt.ArrayLike, audit_n: int, harm: npt.ArrayLike, events: int, alpha: float
) -> BoolArray:
    """Fisher's exact one-sided test of "deployment rate <= audited rate" at ``alpha``.

    The p-value is the hypergeometric tail ``P(X >= harm)`` of the deployment's harms
    given the two samples' total, computed by `scipy.stats.hypergeom` (Fisher 1935).
    """
    from scipy.stats import hypergeom

    a = np.asarray(audit_damage, dtype=np.int64)
    d = np.asarray(harm, dtype=np.int64)
    p = hypergeom.sf(d - 1, audit_n + events, a + d, events)
    return np.asarray(p <= alpha, dtype=bool)


def _tables(n: int, level: float, tolerance: float) -> tuple[FloatArray, FloatArray]:
    """A and R for every possible audit count 0..n, A at one-sided ``level``."""
    cells = [AuditCell(n, x, x / n, 0.0, 1.0, FIXED_K) for x in range(n + 1)]
    upper = [audit_upper(cell, level) for cell in cells]
    limit = [material_limit(c, a, tolerance) for c, a in zip(cells, upper, strict=True)]
    return np.array(upper), np.array(limit)


def simulate_drift(setup: DriftSetup, chunk: int = 100) -> DriftResult:
    """Replay the setup ``sims`` times from its seed; see `DriftResult`."""
    if not 0 <= setup.drifting <= setup.cells:
        raise InputError(
            "setup", f"has drifting={setup.drifting}, outside [0, cells={setup.cells}]"
        )
    level = FamilyLevel(setup.alpha, setup.cells)
    rng = np.random.default_rng(setup.seed)
    rates = np.full(setup.cells, setup.audit_rate)
    rates[: setup.drifting] = min(1.0, setup.drift * setup.audit_rate)
    drifted = np.arange(setup.cells) < setup.drifting
    tally = dict.fromkeys(("alarm", "caught", "ref", "bounds", "ref_alarm", "bounds_alarm",
                           "ended", "steady_ended"), 0)  # fmt: skip
    for start in range(0, setup.sims, chunk):
        m = min(chunk, setup.sims - start)
        audit_x = rng.binomial(setup.audit_n, setup.audit_rate, size=(m, setup.cells))
        harms = rng.random((m, setup.cells, setup.events)) < rates[None, :, None]
        flat, damage = harms.reshape(m * setup.cells, -1), audit_x.reshape(-1)
        mirage, consistent = judge_streams(flat, damage, setup.audit_n, level, setup.tolerance)
        reference = reference_rejects(
            damage, setup.audit_n, flat.sum(axis=1), setup.events, level.mirage_alpha
        )
        bounds = _bounds_mirages(flat, damage, setup.audit_n, level.cell_alpha)
        _count(tally, drifted, (m, setup.cells), mirage, reference, bounds, consistent)
    return _result(setup, tally)


def _count(
    tally: dict[str, int],
    drifted: BoolArray,
    shape: tuple[int, int],
    mirage: BoolArray,
    reference: BoolArray,
    bounds: BoolArray,
    consistent: BoolArray,
) -> None:
    steady = ~drifted
    by = [flag.reshape(shape) for flag in (mirage, reference, bounds, consistent)]
    mirage2, reference2, bounds2, consistent2 = by
    tally["alarm"] += int(np.sum(np.any(mirage2[:, steady], axis=1)))
    tally["ref_alarm"] += int(np.sum(np.any(reference2[:, steady], axis=1)))
    tally["bounds_alarm"] += int(np.sum(np.any(bounds2[:, steady], axis=1)))
    tally["caught"] += int(np.sum(mirage2[:, drifted]))
    tally["ref"] += int(np.sum(reference2[:, drifted]))
    tally["bounds"] += int(np.sum(bounds2[:, drifted]))
    tally["ended"] += int(np.sum(consistent2[:, drifted]))
    tally["steady_ended"] += int(np.sum(consistent2[:, steady]))


def _result(setup: DriftSetup, tally: dict[str, int]) -> DriftResult:
    drifted = setup.sims * setup.drifting
    held = setup.sims * (setup.cells - setup.drifting)

    def share(key: str, of: int) -> float:
        return tally[key] / of if of else math.nan

    deployments = setup.sims if held else 0
    return DriftResult(
        setup=setup,
        any_false_alarm=share("alarm", deployments),
        power=share("caught", drifted),
        reference_power=share("ref", drifted),
        bounds_power=share("bounds", drifted),
        reference_false_alarm=share("ref_alarm", deployments),
        bounds_false_alarm=share("bounds_alarm", deployments),
        false_consistent=share("ended", drifted),
        steady_consistent=share("steady_ended", held),
    )
