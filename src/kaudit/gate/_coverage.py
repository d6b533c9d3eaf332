"""How often the gate grants a cell whose true damage rate is above the policy's bound.

A cell is collected run by run until a stopping rule says done (the harness's
`StoppingRule.is_done`, or a fixed k), then the gate itself decides on it. The chance of
a grant is computed two ways: exactly, by carrying the probability of every (damage, n)
path through the rule, and by seeded simulation, which checks the exact figure. A grant
is false when the true rate is above the bound; the gate promises at most alpha/2 on a
fixed-k cell (the one-sided Clopper-Pearson bound) and at most alpha on a stopped cell
(Ville's inequality for the confidence sequence), whatever the rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kaudit.gate._gate import Evidence, decide
from kaudit.gate._policy import GatePolicy, Requirement
from kaudit.ledger import RunRecord
from kaudit.stats import CellKey

__all__ = ["GrantRate", "false_grant_rate"]

Stop = Callable[[int, int], bool]
"""Whether a cell with (damage runs, counted runs) stops: `StoppingRule.is_done`'s shape."""

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


class _Gate:
    """The gate's own decision on a cell of x damage runs in n, memoised per (x, n)."""

    def __init__(self, limit: float, min_k: int, alpha: float, sequential: bool) -> None:
        requirement = Requirement(
            min_k=min_k, alpha=alpha, max_damage_upper=limit, cover_suite=False
        )
        self._policy = GatePolicy(authorities={"autonomous_write": requirement})
        key = CellKey("m", _TASK, _DIGEST, None)
        self._sequential = frozenset({key}) if sequential else frozenset()
        self._seen: dict[tuple[int, int], bool] = {}

    def grants(self, x: int, n: int) -> bool:
        if (x, n) not in self._seen:
            records = [_record(i, i < x) for i in range(n)]
            evidence = Evidence(records, True, sequential=self._sequential)
            decision = decide(self._policy, "autonomous_write", evidence).decision
            self._seen[(x, n)] = decision == "grant"
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


def false_grant_rate(
    rate: float,
    limit: float,
    stop: Stop,
    max_k: int,
    *,
    alpha: float = 0.05,
    min_k: int = 0,
    sequential: bool = True,
    sims: int = 4000,
    seed: int = 0,
) -> GrantRate:
    """The chance the gate grants `max_damage_upper: limit` on a cell of true rate `rate`.

    Each cell draws Bernoulli(`rate`) runs until `stop(damage, n)` or `max_k` runs; the
    gate then decides with the anytime-valid bound (`sequential`) or Clopper-Pearson.
    With `rate` above `limit`, every grant is a false one.
    """
    if not 0.0 <= rate <= 1.0 or max_k < 1:
        raise ValueError(f"need 0 <= rate <= 1 and max_k >= 1, got {rate}, {max_k}")
    gate = _Gate(limit, min_k, alpha, sequential)
    done = np.zeros((max_k + 1, max_k + 1), dtype=bool)
    for n in range(1, max_k + 1):
        for x in range(n + 1):
            done[n, x] = n == max_k or stop(x, n)
    exact = _exact(rate, done, gate)
    draws = np.random.default_rng(seed).random((sims, max_k)) < rate
    damage = np.cumsum(draws, axis=1)
    steps = np.arange(1, max_k + 1)
    stopped = done[steps[None, :], damage]
    n_at = stopped.argmax(axis=1) + 1
    x_at = damage[np.arange(sims), n_at - 1]
    granted = sum(gate.grants(int(x), int(n)) for x, n in zip(x_at, n_at, strict=True))
    return GrantRate(exact, granted / sims, sims, float(n_at.mean()))


def _exact(rate: float, done: np.ndarray, gate: _Gate) -> float:
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
            if gate.grants(int(x), n):
                grant += alive[x]
            alive[x] = 0.0
    return float(grant)
