"""How often the gate grants a cell whose true damage rate is above the policy's bound.

Two ways a cell reaches the gate are measured. Under a stopping rule: runs are collected
one by one until the rule says done (the harness's `StoppingRule.is_done`, or a fixed k),
then the gate decides once. Extended after a denial: the gate is asked at every look of
a schedule (k = 23, 46, …, or after every run) and the team stops at the first grant.
Each chance of a grant is computed two ways: exactly, by carrying the probability of
every (damage, n) path through the looks, and by seeded simulation, which checks the
exact figure. A grant is false when the true rate is above the bound; the gate promises
at most alpha/2 for every cell, however often it is asked (`cell_upper`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kaudit._require import require_at_least, require_probability
from kaudit.errors import InputError
from kaudit.gate._gate import Evidence, decide
from kaudit.gate._policy import GatePolicy, Requirement
from kaudit.ledger import RunRecord
from kaudit.stats import clopper_pearson

__all__ = [
    "ExtensionRate",
    "GrantRate",
    "extension_grant_rate",
    "false_grant_rate",
    "fixed_n_grants",
]

Stop = Callable[[int, int], bool]
"""Whether a cell with (damage runs, counted runs) stops: `StoppingRule.is_done`'s shape."""
Grants = Callable[[int, int], bool]
"""Whether a cell of (damage runs, counted runs) is granted."""

_TASK, _DIGEST = "cell", "0" * 64


@dataclass(frozen=True)
class GrantRate:
    """The gate's grant rate on one cell collected under a stopping rule.

    Attributes:
        exact: The probability of a grant, from the exact path enumeration.
        simulated: The share of `sims` simulated cells granted.
        sims: Simulated cells.
        mean_n: Mean runs per simulated cell when it stopped.
    """

    exact: float
    simulated: float
    sims: int
    mean_n: float


@dataclass(frozen=True)
class ExtensionRate:
    """The chance a team that re-asks the gate after every denial is ever granted.

    Attributes:
        exact: The probability of a grant at some look, from the exact enumeration.
        simulated: The share of `sims` simulated cells granted at some look.
        sims: Simulated cells.
        looks: The run counts the gate was asked at.
    """

    exact: float
    simulated: float
    sims: int
    looks: tuple[int, ...]


class _Gate:
    """The gate's own decision on a cell of x damage runs in n, memoised per (x, n)."""

    def __init__(self, limit: float, min_k: int, alpha: float) -> None:
        requirement = Requirement(
            min_k=min_k, alpha=alpha, max_damage_upper=limit, cover_suite=False
        )
        self._policy = GatePolicy(authorities={"autonomous_write": requirement})
        self._seen: dict[tuple[int, int], bool] = {}
        self._damage: list[RunRecord] = []
        self._clean: list[RunRecord] = []

    def grants(self, x: int, n: int) -> bool:
        if (x, n) not in self._seen:
            while len(self._clean) < n:  # records built once, shared by every (x, n)
                i = len(self._clean)
                self._damage.append(_record(i, True))
                self._clean.append(_record(i, False))
            records = self._damage[:x] + self._clean[x:n]
            decision = decide(self._policy, "autonomous_write", Evidence(records, True))
            self._seen[(x, n)] = decision.decision == "grant"
        return self._seen[(x, n)]


def _record(i: int, damage: bool) -> RunRecord:
    return RunRecord(
        campaign="c",
        model="m",
        task=_TASK,
        run_index=i,
        seed=i,
        status="labeled",
        outcome="FAIL_DAMAGE" if damage else "PASS",
        counts_as_damage=damage,
        counts_as_damage_upper=damage,
        task_digest=_DIGEST,
    )


def fixed_n_grants(limit: float, alpha: float = 0.05, min_k: int = 0) -> Grants:
    """The gate's old rule, the baseline: one-sided Clopper-Pearson as if n were fixed."""

    def grants(x: int, n: int) -> bool:
        return n >= max(min_k, 1) and clopper_pearson(x, n, alpha)[1] <= limit

    return grants


def false_grant_rate(
    rate: float,
    limit: float,
    stop: Stop,
    max_k: int,
    *,
    alpha: float = 0.05,
    min_k: int = 0,
    sims: int = 4000,
    seed: int = 0,
    grants: Grants | None = None,
) -> GrantRate:
    """The chance the gate grants `max_damage_upper: limit` on a cell of true rate `rate`.

    Each cell draws Bernoulli(`rate`) runs until `stop(damage, n)` or `max_k` runs; the
    gate (`decide`, or `grants` when given, e.g. `fixed_n_grants`) then decides once.
    With `rate` above `limit`, every grant is a false one.
    """
    _check(rate, max_k)
    judge = grants or _Gate(limit, min_k, alpha).grants
    done = np.zeros((max_k + 1, max_k + 1), dtype=bool)
    for n in range(1, max_k + 1):
        for x in range(n + 1):
            done[n, x] = n == max_k or stop(x, n)
    exact = _exact_stopped(rate, done, judge)
    damage = _paths(rate, sims, max_k, seed)
    steps = np.arange(1, max_k + 1)
    stopped = done[steps[None, :], damage]
    n_at = stopped.argmax(axis=1) + 1
    x_at = damage[np.arange(sims), n_at - 1]
    granted = sum(judge(int(x), int(n)) for x, n in zip(x_at, n_at, strict=True))
    return GrantRate(exact, granted / sims, sims, float(n_at.mean()))


def extension_grant_rate(
    rate: float,
    limit: float,
    looks: Sequence[int],
    *,
    alpha: float = 0.05,
    min_k: int = 0,
    sims: int = 4000,
    seed: int = 0,
    grants: Grants | None = None,
) -> ExtensionRate:
    """The chance a cell of true rate `rate` is ever granted when the gate is asked at `looks`.

    The team extends the cell after every denial (a larger k, another campaign, one more
    run) and asks again at each run count in `looks`, stopping at the first grant.
    """
    schedule = tuple(sorted(set(looks)))
    if not schedule or schedule[0] < 1:
        raise InputError("looks", f"must be run counts >= 1, got {list(looks)}")
    _check(rate, schedule[-1])
    judge = grants or _Gate(limit, min_k, alpha).grants
    highest = _thresholds(judge, schedule)
    exact = _exact_looks(rate, schedule, highest)
    damage = _paths(rate, sims, schedule[-1], seed)
    at = damage[:, np.asarray(schedule) - 1]
    ever = np.any(at <= np.asarray([highest[n] for n in schedule])[None, :], axis=1)
    return ExtensionRate(exact, float(ever.mean()), sims, schedule)


def _check(rate: float, max_k: int) -> None:
    require_probability("rate", rate, zero=True, one=True)
    require_at_least("max_k", max_k, 1)


def _paths(rate: float, sims: int, max_k: int, seed: int) -> npt.NDArray[np.int64]:
    """Cumulative damage runs of `sims` seeded cells, shape (sims, max_k)."""
    draws = np.random.default_rng(seed).random((sims, max_k)) < rate
    return np.cumsum(draws, axis=1)


def _thresholds(grants: Grants, looks: Sequence[int]) -> dict[int, int]:
    """The most damage runs granted at each look (−1: none), searched from the last look's.

    A grant at x damage runs implies one at fewer, so each look's answer is one
    boundary; the search starts from the previous look's and walks either way, checking
    the boundary on both sides, so no monotonicity in n is assumed.
    """
    found: dict[int, int] = {}
    x = -1
    for n in looks:
        x = min(x, n)
        while x >= 0 and not grants(x, n):
            x -= 1
        while x < n and grants(x + 1, n):
            x += 1
        found[n] = x
    return found


def _exact_looks(rate: float, looks: Sequence[int], highest: dict[int, int]) -> float:
    """P(granted at some look): carry the ungranted damage counts from look to look."""
    alive = np.zeros(looks[-1] + 1)
    alive[0] = 1.0
    grant = 0.0
    n = 0
    for look in looks:
        for _ in range(look - n):
            moved = alive * (1 - rate)
            moved[1:] += alive[:-1] * rate
            alive = moved
        n = look
        top = highest[look]
        if top >= 0:
            grant += float(alive[: top + 1].sum())
            alive[: top + 1] = 0.0
    return grant


def _exact_stopped(rate: float, done: npt.NDArray[np.bool_], grants: Grants) -> float:
    """Probability of a grant: carry every unstopped (damage, n) state one run forward."""
    max_k = done.shape[0] - 1
    alive = np.zeros(max_k + 2)
    alive[0] = 1.0
    grant = 0.0
    for n in range(1, max_k + 1):
        moved = np.zeros(max_k + 2)
        moved[: n + 1] = alive[: n + 1] * (1 - rate)
        moved[1 : n + 2] += alive[: n + 1] * rate
        alive = moved
        for x in np.flatnonzero(done[n, : n + 1] & (alive[: n + 1] > 0)):
            if grants(int(x), n):
                grant += alive[x]
            alive[x] = 0.0
    return float(grant)
