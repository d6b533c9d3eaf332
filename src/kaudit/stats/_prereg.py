"""Pre-registration: claims, pools and decision rules fixed before the data are seen.

A prereg file is YAML loaded into :class:`Prereg` (unknown keys are errors). Freezing
records its sha256; analysis refuses a file whose bytes changed since. Each claim is
judged on its pool as *confirmed*, *underpowered* (the pool misses a declared floor or
the statistic is undefined) or *demoted* (powered but not supported, not robust to the
inclusive damage label, or not replicated), always with the reason.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from kaudit.errors import SpecError

from ._betabinom import fit_mle
from ._bootstrap import bootstrap_ratio, expanded_percentile_interval, resample_clusters
from ._gradient import capability_gradient
from ._intervals import clopper_pearson
from ._miss import Weighting, miss_weights
from ._population import population_miss
from ._sequence import CS_METHOD, beta_binomial_cs
from ._stochastic import is_stochastic
from ._tally import CellKey, CellTally

__all__ = [
    "ClaimResult",
    "Prereg",
    "analyze",
    "load_prereg",
    "prereg_digest",
    "select_pool",
]

Status = Literal["confirmed", "underpowered", "demoted"]
_Verdict = Literal["confirmed", "underpowered", "not_confirmed"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class PowerFloor(_Strict):
    """Minimum sample sizes below which a claim is reported underpowered, never judged."""

    min_cells: int = Field(1, ge=0, description="Cells the pool must hold.")
    min_runs_per_cell: int = Field(1, ge=1, description="Runs every cell of the pool must hold.")
    min_damage_pairs: int = Field(0, ge=0, description="Damage-producing cells the pool needs.")


class Pool(_Strict):
    """A named subset of the cells: by model and task (omitted = all)."""

    description: str = ""
    models: list[str] | None = None
    tasks: list[str] | None = None


class DemoteRules(_Strict):
    """When a claim that passed its own test is still demoted."""

    upper_label_flip: bool = Field(
        True, description="Demote if the claim fails when damage is counted as damage_upper."
    )
    failed_replication: bool = Field(True, description="Demote if the replication pool fails.")
    underpowered_replication: bool = Field(
        False, description="Demote (instead of underpowered) if the replication pool is."
    )


class _Claim(_Strict):
    id: str = Field(min_length=1)
    pool: str
    statement: str = ""
    replicate_in: str | None = None
    power: PowerFloor | None = None


class StochasticCellsClaim(_Claim):
    """At least ``at_least`` cells of the pool are demonstrably stochastic."""

    kind: Literal["stochastic_cells"]
    at_least: int = Field(ge=1)


class StochasticShareClaim(_Claim):
    """Stochastic cells carry at least ``at_least`` of the damage (bootstrap lower end)."""

    kind: Literal["stochastic_share"]
    at_least: float = Field(ge=0.0, le=1.0)


class MissRateClaim(_Claim):
    """The k-run audit miss rate is at least / at most a bound.

    ``at_least`` is judged on the observed statistic's bootstrap interval, which is
    conservative there (the observed rate is a lower bound). ``at_most`` is judged on the
    population estimate's upper bound (`PopulationMiss.miss_upper`, pair-weighted): a
    claim "one run misses at most X" built on a lower bound would be anti-conservative.
    """

    kind: Literal["miss_rate"]
    k: int = Field(1, ge=1)
    weighting: Weighting = "pair"
    at_least: float | None = Field(None, ge=0.0, le=1.0)
    at_most: float | None = Field(None, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _one_bound(self) -> MissRateClaim:
        if (self.at_least is None) == (self.at_most is None):
            raise ValueError("give exactly one of at_least, at_most")
        return self


class OverdispersionClaim(_Claim):
    """Damage is overdispersed across cells: beta-binomial LR test p < alpha."""

    kind: Literal["overdispersion"]


class CellStochasticClaim(_Claim):
    """One named cell is demonstrably stochastic."""

    kind: Literal["cell_stochastic"]
    model: str
    task: str


class GradientClaim(_Claim):
    """Damage-producing tasks rise or fall along ``model_order`` (whole rho interval)."""

    kind: Literal["gradient"]
    direction: Literal["increasing", "decreasing"]


Claim = Annotated[
    StochasticCellsClaim
    | StochasticShareClaim
    | MissRateClaim
    | OverdispersionClaim
    | CellStochasticClaim
    | GradientClaim,
    Field(discriminator="kind"),
]


class Prereg(_Strict):
    """A pre-registration file: settings, pools, floors, rules and claims."""

    version: Literal[1] = 1
    title: str = ""
    alpha: float = Field(0.05, gt=0.0, lt=1.0)
    eps: float = Field(0.05, ge=0.0, lt=0.5)
    bootstrap: int = Field(2000, ge=100)
    seed: int = 0
    model_order: list[str] | None = None
    pools: dict[str, Pool]
    power: PowerFloor = PowerFloor()
    demote: DemoteRules = DemoteRules()
    claims: list[Claim] = Field(min_length=1)

    @model_validator(mode="after")
    def _references(self) -> Prereg:
        ids = [c.id for c in self.claims]
        if len(set(ids)) != len(ids):
            raise ValueError(f"claim ids must be unique, got {ids}")
        for c in self.claims:
            for name in (c.pool, c.replicate_in):
                if name is not None and name not in self.pools:
                    raise ValueError(f"claim {c.id!r} names unknown pool {name!r}")
            if isinstance(c, GradientClaim) and not self.model_order:
                raise ValueError(f"claim {c.id!r} is a gradient claim but model_order is unset")
        return self


def prereg_digest(data: bytes) -> str:
    """sha256 of the file's exact bytes: any edit, even whitespace, is a change."""
    return hashlib.sha256(data).hexdigest()


def load_prereg(text: str, source: str = "<prereg>") -> Prereg:
    """Parse prereg YAML; errors raise SpecError naming the file and the field."""
    from kaudit.spec._yaml import parse_yaml  # here, not at import: `stats` reads no YAML

    raw = parse_yaml(text, source)
    try:
        return Prereg.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "<root>"
        raise SpecError(source, field, first["msg"]) from exc


@dataclass(frozen=True)
class ClaimResult:
    """How one claim fared.

    Attributes:
        id: The claim id.
        kind: The claim kind.
        pool: The pool it was judged on.
        status: confirmed, underpowered or demoted.
        reason: Why, in one sentence with the numbers.
        estimate: The statistic on the pool (NaN when undefined).
        interval: Its (1 − alpha) interval, when the claim has one.
    """

    id: str
    kind: str
    pool: str
    status: Status
    reason: str
    estimate: float
    interval: tuple[float, float] | None


@dataclass(frozen=True)
class _Outcome:
    verdict: _Verdict
    reason: str
    estimate: float = math.nan
    interval: tuple[float, float] | None = None


def select_pool(pool: Pool, tallies: Sequence[CellTally]) -> list[CellTally]:
    """The cells of ``tallies`` that belong to ``pool`` (by model and task)."""
    return [
        t
        for t in tallies
        if (pool.models is None or t.model in pool.models)
        and (pool.tasks is None or t.task in pool.tasks)
    ]


def _floor_failure(floor: PowerFloor, cells: Sequence[CellTally]) -> str | None:
    if len(cells) < floor.min_cells:
        return f"pool has {len(cells)} cells, floor is {floor.min_cells}"
    short = [f"{t.model}/{t.task}" for t in cells if t.n < floor.min_runs_per_cell]
    if short:
        return f"{len(short)} cells below {floor.min_runs_per_cell} runs (first: {short[0]})"
    pairs = sum(1 for t in cells if t.damage > 0)
    if pairs < floor.min_damage_pairs:
        return f"pool has {pairs} damage-producing cells, floor is {floor.min_damage_pairs}"
    return None


def _interval_verdict(
    name: str, est: float, ci: tuple[float, float], bound: float, above: bool
) -> _Outcome:
    """Confirmed when the whole interval lies on the claimed side of the bound."""
    if math.isnan(est) or math.isnan(ci[0]):
        return _Outcome("underpowered", f"{name} is undefined on this pool", est, None)
    ok = ci[0] >= bound if above else ci[1] <= bound
    side = ("≥" if ok else "not ≥") if above else ("≤" if ok else "not ≤")
    reason = f"{name} {est:.3f}, interval ({ci[0]:.3f}, {ci[1]:.3f}) {side} {bound}"
    return _Outcome("confirmed" if ok else "not_confirmed", reason, est, ci)


def _bootstrap_ratio_ci(
    num: Sequence[float], den: Sequence[float], cells: Sequence[CellTally], prereg: Prereg
) -> tuple[float, tuple[float, float]]:
    """Ratio of sums with the pool bootstrap's interval: whole tasks drawn, expanded."""
    top, bottom = math.fsum(num), math.fsum(den)
    est = top / bottom if bottom else math.nan
    tasks = [t.task_id for t in cells]
    counts = resample_clusters(tasks, prereg.bootstrap, prereg.seed)
    draws = bootstrap_ratio(np.asarray(num), np.asarray(den), counts)
    return est, expanded_percentile_interval(draws, len(set(tasks)), prereg.alpha)


def _stopped(t: CellTally, seq: Collection[CellKey]) -> bool:
    return t.key in seq


def _judge_share(
    claim: StochasticShareClaim, cells: Sequence[CellTally], p: Prereg, seq: Collection[CellKey]
) -> _Outcome:
    flags = [is_stochastic(t.damage, t.n, p.alpha, p.eps, _stopped(t, seq)) for t in cells]
    num = [float(t.damage) if f else 0.0 for t, f in zip(cells, flags, strict=True)]
    est, ci = _bootstrap_ratio_ci(num, [float(t.damage) for t in cells], cells, p)
    return _interval_verdict("stochastic share of damage", est, ci, claim.at_least, True)


def _judge_miss(claim: MissRateClaim, cells: Sequence[CellTally], p: Prereg) -> _Outcome:
    num, den = miss_weights(cells, claim.k, claim.weighting)
    est, ci = _bootstrap_ratio_ci(num, den, cells, p)
    name = f"k={claim.k} {claim.weighting}-weighted miss rate"
    if claim.at_least is not None:
        return _interval_verdict(name + " (observed, a lower bound)", est, ci, claim.at_least, True)
    return _judge_miss_at_most(claim, cells, p)


def _judge_miss_at_most(claim: MissRateClaim, cells: Sequence[CellTally], p: Prereg) -> _Outcome:
    """An upper claim needs the population's upper bound; the observed rate is a lower one."""
    bound = claim.at_most or 0.0
    if claim.weighting == "event":
        reason = (
            "not supported: an at_most claim needs an upper bound, and the event-weighted "
            "miss rate has only the observed one, a lower bound; claim it pair-weighted"
        )
        return _Outcome("not_confirmed", reason)
    fit = population_miss([t.damage for t in cells], [t.n for t in cells], p.alpha)
    upper = fit.miss_upper(claim.k)
    name = f"k={claim.k} population miss rate"
    if math.isnan(upper) or fit.interval is None:
        return _Outcome("underpowered", f"{name} is not identified on this pool")
    ok = upper <= bound
    reason = f"{name} upper bound {upper:.3f} {'≤' if ok else 'not ≤'} {bound}"
    estimate = fit.miss if claim.k == 1 and fit.miss is not None else math.nan
    return _Outcome("confirmed" if ok else "not_confirmed", reason, estimate, None)


def _judge_cells(
    claim: StochasticCellsClaim, cells: Sequence[CellTally], p: Prereg, seq: Collection[CellKey]
) -> _Outcome:
    found = sum(1 for t in cells if is_stochastic(t.damage, t.n, p.alpha, p.eps, _stopped(t, seq)))
    ok = found >= claim.at_least
    reason = f"{found} demonstrably-stochastic cells, claim needs {claim.at_least}"
    return _Outcome("confirmed" if ok else "not_confirmed", reason, float(found))


def _judge_overdispersion(cells: Sequence[CellTally], p: Prereg) -> _Outcome:
    fit = fit_mle([t.damage for t in cells], [t.n for t in cells], p.alpha)
    if fit.lr_p is None or fit.icc is None:
        return _Outcome("underpowered", "rho is not identified (no damage, or damage on every run)")
    ok = fit.lr_p < p.alpha
    reason = f"MLE rho {fit.icc:.3f}, LR test p = {fit.lr_p:.3g} {'<' if ok else '≥'} {p.alpha}"
    return _Outcome("confirmed" if ok else "not_confirmed", reason, fit.icc, fit.icc_ci)


def _judge_cell(
    claim: CellStochasticClaim, cells: Sequence[CellTally], p: Prereg, seq: Collection[CellKey]
) -> _Outcome:
    match = [t for t in cells if t.model == claim.model and t.task == claim.task]
    if not match:
        return _Outcome("underpowered", f"no cell {claim.model}/{claim.task} in the pool")
    t = match[0]
    stopped = _stopped(t, seq)
    ci = (beta_binomial_cs if stopped else clopper_pearson)(t.damage, t.n, p.alpha)
    ok = is_stochastic(t.damage, t.n, p.alpha, p.eps, stopped)
    where = "inside" if ok else "not inside"
    name = (
        f"anytime-valid interval ({CS_METHOD}; stopped sequentially)"
        if stopped
        else ("exact interval")
    )
    reason = f"{t.damage}/{t.n}, {name} ({ci[0]:.4f}, {ci[1]:.4f}) {where} ({p.eps}, {1 - p.eps})"
    return _Outcome("confirmed" if ok else "not_confirmed", reason, t.phat, ci)


def _judge_gradient(claim: GradientClaim, cells: Sequence[CellTally], p: Prereg) -> _Outcome:
    order = p.model_order or []
    present = {t.model for t in cells}
    if any(m not in present for m in order):
        return _Outcome("underpowered", "a model of model_order has no cell in the pool")
    g = capability_gradient(cells, order, alpha=p.alpha, resamples=p.bootstrap, seed=p.seed)
    if g.spearman is None or g.ci is None:
        return _Outcome("underpowered", f"Spearman rho undefined: counts {list(g.counts)} all tie")
    up = claim.direction == "increasing"
    ok = g.ci[0] > 0.0 if up else g.ci[1] < 0.0
    reason = (
        f"Spearman rho {g.spearman:.3f} over counts {list(g.counts)}, interval "
        f"({g.ci[0]:.3f}, {g.ci[1]:.3f}) {'is' if ok else 'is not'} {'above' if up else 'below'} 0"
    )
    return _Outcome("confirmed" if ok else "not_confirmed", reason, g.spearman, g.ci)


def _judge(
    claim: Claim, cells: Sequence[CellTally], p: Prereg, seq: Collection[CellKey] = ()
) -> _Outcome:
    floor = _floor_failure(claim.power or p.power, cells)
    if floor is not None:
        return _Outcome("underpowered", floor)
    if isinstance(claim, StochasticCellsClaim):
        return _judge_cells(claim, cells, p, seq)
    if isinstance(claim, StochasticShareClaim):
        return _judge_share(claim, cells, p, seq)
    if isinstance(claim, MissRateClaim):
        return _judge_miss(claim, cells, p)
    if isinstance(claim, OverdispersionClaim):
        return _judge_overdispersion(cells, p)
    if isinstance(claim, CellStochasticClaim):
        return _judge_cell(claim, cells, p, seq)
    return _judge_gradient(claim, cells, p)


def _upper(cells: Sequence[CellTally]) -> list[CellTally]:
    return [replace(t, damage=t.damage_upper) for t in cells]


def _decide(
    claim: Claim,
    pools: Mapping[str, Sequence[CellTally]],
    p: Prereg,
    seq: Collection[CellKey] = (),
) -> ClaimResult:
    cells = select_pool(p.pools[claim.pool], pools.get(claim.pool, ()))
    main = _judge(claim, cells, p, seq)

    def result(status: Status, reason: str) -> ClaimResult:
        return ClaimResult(
            claim.id, claim.kind, claim.pool, status, reason, main.estimate, main.interval
        )

    if main.verdict == "underpowered":
        return result("underpowered", main.reason)
    if main.verdict == "not_confirmed":
        return result("demoted", f"not supported: {main.reason}")
    if p.demote.upper_label_flip:
        upper = _judge(claim, _upper(cells), p, seq)
        if upper.verdict != "confirmed":
            return result("demoted", f"fails with damage_upper labels: {upper.reason}")
    if claim.replicate_in is None:
        return result("confirmed", main.reason)
    rep_cells = select_pool(p.pools[claim.replicate_in], pools.get(claim.replicate_in, ()))
    rep = _judge(claim, rep_cells, p, seq)
    where = f"replication in {claim.replicate_in!r}"
    if rep.verdict == "confirmed":
        return result("confirmed", f"{main.reason}; {where}: {rep.reason}")
    if rep.verdict == "underpowered" and not p.demote.underpowered_replication:
        return result("underpowered", f"{main.reason}; {where} underpowered: {rep.reason}")
    if rep.verdict == "not_confirmed" and not p.demote.failed_replication:
        return result(
            "confirmed", f"{main.reason}; {where} failed (not a demote rule): {rep.reason}"
        )
    return result("demoted", f"{where} failed: {rep.reason}")


def analyze(
    prereg: Prereg,
    pools: Mapping[str, Sequence[CellTally]],
    sequential: Collection[CellKey] = (),
) -> list[ClaimResult]:
    """Judge every claim of a pre-registration on its pool's cells, in file order.

    ``pools`` maps a pool name to the cells loaded for it; :func:`select_pool` then keeps
    the cells the pool's model and task filters admit. Cells in ``sequential`` (model,
    task id, digest) were stopped on their own runs: cell claims judge them with the
    anytime-valid interval. Pure and seeded by ``prereg.seed``.
    """
    return [_decide(claim, pools, prereg, sequential) for claim in prereg.claims]
