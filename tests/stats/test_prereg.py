from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaudit.errors import SpecError
from kaudit.stats import CellTally, analyze, freeze_prereg, load_frozen_prereg, prereg_lock_path
from kaudit.stats._prereg import load_prereg, prereg_digest

BASE = """
version: 1
title: demo
alpha: 0.05
eps: 0.05
bootstrap: 500
seed: 1
pools:
  dev: {}
  confirm: {models: [m]}
power: {min_cells: 2, min_runs_per_cell: 8}
claims:
"""

DEV = [
    CellTally("m", "a", 16, 12, 12, 0),
    CellTally("m", "b", 16, 8, 8, 0),
    CellTally("m", "c", 16, 0, 0, 16),
    CellTally("n", "a", 16, 6, 10, 0),
]


def prereg(claims: str, head: str = BASE):
    return load_prereg(head + claims, "p.yaml")


def test_unknown_key_names_file_and_field() -> None:
    with pytest.raises(SpecError, match=r"p\.yaml: claims\.0\.cell_stochastic\.colour"):
        prereg("  - {id: x, pool: dev, kind: cell_stochastic, model: m, task: a, colour: red}\n")


def test_unknown_pool_is_rejected() -> None:
    with pytest.raises(SpecError, match="unknown pool 'nope'"):
        prereg("  - {id: x, pool: nope, kind: overdispersion}\n")


def test_miss_rate_claim_needs_exactly_one_bound() -> None:
    with pytest.raises(SpecError, match="exactly one"):
        prereg("  - {id: x, pool: dev, kind: miss_rate}\n")


def test_digest_is_sha256_of_bytes() -> None:
    assert (
        prereg_digest(b"abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )


def test_confirmed_cell_claim_replicates() -> None:
    p = prereg(
        "  - {id: flag, pool: dev, kind: cell_stochastic, model: m, task: a,"
        " replicate_in: confirm}\n"
    )
    (r,) = analyze(
        p,
        {
            "dev": DEV,
            "confirm": [CellTally("m", "a", 16, 11, 11, 0), CellTally("m", "c", 16, 0, 0, 0)],
        },
    )
    assert r.status == "confirmed"
    assert "12/16" in r.reason and "replication in 'confirm'" in r.reason
    assert r.interval == pytest.approx((0.4762, 0.9273), abs=5e-5)


def test_failed_replication_demotes() -> None:
    p = prereg(
        "  - {id: flag, pool: dev, kind: cell_stochastic, model: m, task: a,"
        " replicate_in: confirm}\n"
    )
    confirm = [CellTally("m", "a", 16, 0, 0, 0), CellTally("m", "c", 16, 0, 0, 0)]
    (r,) = analyze(p, {"dev": DEV, "confirm": confirm})
    assert r.status == "demoted" and "replication in 'confirm' failed" in r.reason


def test_pool_below_floor_is_underpowered() -> None:
    p = prereg("  - {id: od, pool: dev, kind: overdispersion, power: {min_cells: 10}}\n")
    (r,) = analyze(p, {"dev": DEV})
    assert r.status == "underpowered" and "floor is 10" in r.reason


def test_short_cells_are_underpowered() -> None:
    p = prereg("  - {id: od, pool: dev, kind: overdispersion}\n")
    (r,) = analyze(p, {"dev": [*DEV, CellTally("n", "z", 4, 0, 0, 0)]})
    assert r.status == "underpowered" and "below 8 runs" in r.reason


def test_unsupported_claim_is_demoted_with_reason() -> None:
    p = prereg("  - {id: miss, pool: dev, kind: miss_rate, at_least: 0.9}\n")
    (r,) = analyze(p, {"dev": DEV})
    assert r.status == "demoted" and r.reason.startswith(
        "not supported: k=1 pair-weighted miss rate"
    )


def test_claim_that_flips_under_upper_labels_is_demoted() -> None:
    # 12/16 is stochastic; counted with the inclusive label it is 16/16, which is not.
    p = prereg("  - {id: flag, pool: dev, kind: cell_stochastic, model: m, task: a}\n")
    pool = [CellTally("m", "a", 16, 12, 16, 0), CellTally("m", "c", 16, 0, 0, 16)]
    (r,) = analyze(p, {"dev": pool})
    assert r.status == "demoted"
    assert r.reason.startswith("fails with damage_upper labels: 16/16")


def test_upper_flip_rule_can_be_switched_off() -> None:
    head = BASE.replace("claims:", "demote: {upper_label_flip: false}\nclaims:")
    p = prereg("  - {id: flag, pool: dev, kind: cell_stochastic, model: m, task: a}\n", head)
    pool = [CellTally("m", "a", 16, 12, 16, 0), CellTally("m", "c", 16, 0, 0, 16)]
    (r,) = analyze(p, {"dev": pool})
    assert r.status == "confirmed"


def test_overdispersion_undefined_is_underpowered() -> None:
    p = prereg("  - {id: od, pool: dev, kind: overdispersion}\n")
    (r,) = analyze(p, {"dev": [CellTally("m", "a", 8, 0, 0, 8), CellTally("m", "b", 8, 0, 0, 8)]})
    assert r.status == "underpowered" and "not identified" in r.reason


def test_gradient_claim_requires_model_order() -> None:
    with pytest.raises(SpecError, match="model_order is unset"):
        prereg("  - {id: g, pool: dev, kind: gradient, direction: decreasing}\n")


def test_miss_rate_claim_estimate_matches_audit_miss_rate() -> None:
    from kaudit.stats import audit_miss_rate

    p = prereg(
        "  - {id: pair, pool: dev, kind: miss_rate, at_least: 0.1}\n"
        "  - {id: event, pool: dev, kind: miss_rate, weighting: event, at_least: 0.1}\n"
    )
    pair, event = analyze(p, {"dev": DEV})
    rate = audit_miss_rate(DEV)
    assert (pair.estimate, event.estimate) == (rate.pair, rate.event)


CLAIM = "  - {id: od, pool: dev, kind: overdispersion}\n"


def test_freeze_writes_the_lock_and_load_frozen_checks_it(tmp_path: Path) -> None:
    spec = tmp_path / "p.yaml"
    spec.write_text(BASE + CLAIM)
    record = freeze_prereg(spec)
    lock = prereg_lock_path(spec)
    assert lock == tmp_path / "p.yaml.lock"
    assert json.loads(lock.read_text()) == record
    assert record["sha256"] == prereg_digest(spec.read_bytes())
    assert record["file"] == "p.yaml" and record["criteria"]["claims"][0]["id"] == "od"
    loaded, digest = load_frozen_prereg(spec)
    assert loaded == load_prereg(BASE + CLAIM) and digest == record["sha256"]


def test_load_frozen_refuses_unfrozen_and_changed_files(tmp_path: Path) -> None:
    spec = tmp_path / "p.yaml"
    spec.write_text(BASE + CLAIM)
    with pytest.raises(SpecError, match="not frozen"):
        load_frozen_prereg(spec)
    freeze_prereg(spec)
    spec.write_text(BASE + CLAIM + "\n")  # whitespace is a change too
    with pytest.raises(SpecError, match="changed since it was frozen"):
        load_frozen_prereg(spec)
    with pytest.raises(SpecError, match="already frozen"):
        freeze_prereg(spec)
    freeze_prereg(spec, force=True)
    assert load_frozen_prereg(spec)[1] == prereg_digest(spec.read_bytes())


def test_freeze_of_an_invalid_file_writes_nothing(tmp_path: Path) -> None:
    spec = tmp_path / "p.yaml"
    spec.write_text(BASE.replace("title:", "titel:") + CLAIM)
    with pytest.raises(SpecError, match="titel"):
        freeze_prereg(spec)
    assert not prereg_lock_path(spec).exists()


def test_an_at_most_miss_rate_claim_is_judged_on_the_population_upper_bound() -> None:
    """The observed pair-weighted rate is 0.458, yet the population's upper bound is 0.836:
    "one run misses at most 0.7" is not confirmed, "at most 0.9" is. Fails if at_most
    claims were judged on the observed statistic, a lower bound; event-weighted at_most
    claims are refused with the reason."""
    from kaudit.stats import population_miss

    p = prereg(
        "  - {id: most, pool: dev, kind: miss_rate, at_most: 0.7}\n"
        "  - {id: event, pool: dev, kind: miss_rate, weighting: event, at_most: 0.9}\n"
        "  - {id: loose, pool: dev, kind: miss_rate, at_most: 0.9}\n"
    )
    most, event, loose = analyze(p, {"dev": DEV})
    upper = population_miss([t.damage for t in DEV], [t.n for t in DEV]).miss_upper(1)
    assert most.status == "demoted" and f"upper bound {upper:.3f} not ≤ 0.7" in most.reason
    assert event.status == "demoted" and "not supported" in event.reason
    assert loose.status == "confirmed"
