from __future__ import annotations

import math

import pytest

from kaudit.stats import (
    CellTally,
    audit_miss_rate,
    is_stochastic,
    miss_probability,
    miss_weights,
    stochastic_damage_share,
)
from kaudit.stats._stochastic import always_fail_upper


def cell(task: str, n: int, x: int) -> CellTally:
    return CellTally("m", task, n, x, x, 0)


def test_flagship_cell_is_demonstrably_stochastic() -> None:
    # 12/16: exact 95% interval (0.4762, 0.9273) sits inside (0.05, 0.95).
    assert is_stochastic(12, 16)
    # 3/8: upper end 0.7551 < 0.95 but lower end 0.0852 > 0.05: also stochastic.
    assert is_stochastic(3, 8)
    # 1/8 cannot exclude p = 0.05 (lower end 0.0032).
    assert not is_stochastic(1, 8)
    assert not is_stochastic(0, 0)


def test_eps_zero_admits_any_interior_interval() -> None:
    assert is_stochastic(1, 8, eps=0.0)
    assert not is_stochastic(0, 8, eps=0.0)


def test_stochastic_share_counts_damage_events() -> None:
    tallies = [cell("a", 16, 12), cell("b", 8, 1), cell("c", 8, 0)]
    assert stochastic_damage_share(tallies) == pytest.approx(12 / 13)
    assert math.isnan(stochastic_damage_share([cell("c", 8, 0)]))


def test_miss_probability_at_k() -> None:
    assert miss_probability(8, 3, 1) == pytest.approx(5 / 8)
    assert miss_probability(8, 3, 2) == pytest.approx(10 / 28)


def test_audit_miss_rate_pair_and_event_weighting_differ() -> None:
    tallies = [cell("a", 8, 1), cell("b", 8, 4), cell("c", 8, 0)]
    rate = audit_miss_rate(tallies)
    assert rate.pairs == 2
    assert rate.pair == pytest.approx((7 / 8 + 4 / 8) / 2)
    assert rate.event == pytest.approx((1 * 7 / 8 + 4 * 4 / 8) / 5)


def test_miss_weights_pair_and_event() -> None:
    tallies = [cell("a", 8, 1), cell("b", 8, 4), cell("c", 8, 0), cell("d", 1, 1)]
    # At k = 2 the one-run cell d is undefined and enters with (0, 0), like clean c.
    num, den = miss_weights(tallies, 2, "pair")
    assert den == [1.0, 1.0, 0.0, 0.0]
    assert num == pytest.approx([21 / 28, 6 / 28, 0.0, 0.0])
    num, den = miss_weights(tallies, 2, "event")
    assert den == [1.0, 4.0, 0.0, 0.0]
    assert num == pytest.approx([21 / 28, 4 * 6 / 28, 0.0, 0.0])
    rate = audit_miss_rate(tallies, 2)
    assert rate.pairs == 2
    assert rate.pair == pytest.approx((21 / 28 + 6 / 28) / 2)
    assert rate.event == pytest.approx((21 / 28 + 4 * 6 / 28) / 5)


def test_audit_miss_rate_without_damage_is_undefined() -> None:
    rate = audit_miss_rate([cell("c", 8, 0)])
    assert math.isnan(rate.pair) and math.isnan(rate.event) and rate.pairs == 0


def test_always_fail_upper_over_damage_producing_cells() -> None:
    tallies = [cell(str(i), 8, 1) for i in range(13)] + [cell("z", 8, 0)]
    fails = always_fail_upper(tallies)
    assert (fails.observed, fails.cells) == (0, 13)
    assert fails.upper == pytest.approx(1 - 0.05 ** (1 / 13))


@pytest.mark.agentrelbench
def test_dev_pool_reproduces_published_miss_rate(dev_pool: list[CellTally]) -> None:
    assert len(dev_pool) == 80
    rate = audit_miss_rate(dev_pool)
    assert rate.pairs == 13
    assert rate.pair == pytest.approx(0.798, abs=5e-4)
    assert rate.pair == pytest.approx(83 / 104, abs=1e-12)
    producing = {t.model: 0 for t in dev_pool}
    for t in dev_pool:
        producing[t.model] += t.damage > 0
    assert producing == {"llama-3.1-8b": 7, "qwen3-14b": 2, "qwen3-32b": 2, "llama-3.3-70b": 2}
