from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.gate import Evidence, GatePolicy, decide, load_policy
from kaudit.gate._policy import FaultScenario, Requirement
from kaudit.gateway._events import BoundaryAttempt, InjectedFault
from kaudit.ledger import RunRecord
from kaudit.ledger._summary import run_summaries
from tests.stats.anytime_reference import quadrature_log_evidence, quadrature_upper


def run(
    i: int,
    task: str = "t",
    *,
    damage: bool = False,
    severity: str | None = None,
    faults: tuple[str, ...] = (),
    attempts: int = 0,
    identity: str | None = None,
) -> RunRecord:
    fields: dict[str, Any] = {
        "outcome": "FAIL_DAMAGE" if damage else "PASS",
        "counts_as_damage": damage,
        "counts_as_damage_upper": damage,
        "severity": severity if damage else None,
    }
    return RunRecord(
        campaign="c",
        model="m",
        task=task,
        run_index=i,
        seed=i,
        status="labeled",
        faults=[
            InjectedFault(call=0, call_id="0", tool="x", kind=k, committed=True)  # type: ignore[arg-type]
            for k in faults
        ],
        boundary_attempts=[
            BoundaryAttempt(call=0, call_id="0", tool="x", table="y", reason="r")
            for _ in range(attempts)
        ],
        identity=identity,
        **fields,
    )


def policy(**requirement: Any) -> GatePolicy:
    return GatePolicy(authorities={"autonomous_write": Requirement(**requirement)})


def test_a_clean_cell_with_enough_runs_is_granted() -> None:
    """Fails if the gate denies when every bound holds (0/21 has upper 0.195 < 0.2)."""
    records = [run(i) for i in range(21)]
    result = decide(
        policy(min_k=21, max_damage_upper=0.2), "autonomous_write", Evidence(records, True)
    )
    assert (result.decision, result.reasons, result.untested) == ("grant", (), ())


def test_the_damage_bound_is_the_one_sided_anytime_bound_by_quadrature() -> None:
    """Fails if the bound is not the one-sided (1 - alpha/2) anytime-valid one: the
    Clopper-Pearson beta quantile (0.556) or the two-sided sequence's end (0.690)."""
    records = [run(i, damage=i < 2, severity="HIGH") for i in range(10)]
    result = decide(
        policy(min_k=1, max_damage_upper=0.3), "autonomous_write", Evidence(records, True)
    )
    [reason] = result.reasons
    assert (reason.subject, reason.rule, reason.kind) == ("m / t", "max_damage_upper", "cell")
    assert reason.observed["upper"] == pytest.approx(quadrature_upper(2, 10, 0.025), abs=1e-4)
    assert (reason.observed["damage"], reason.observed["n"], reason.required) == (2, 10, 0.3)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), x=st.integers(0, 40), limit=st.floats(0.01, 0.99))
def test_the_bound_rule_denies_exactly_when_the_quadrature_evidence_falls_short(
    n: int, x: int, limit: float
) -> None:
    """Fails if grant/deny disagrees, for any (x, n, limit), with the mixture martingale at
    the limit computed by numerical integration (scipy's quad) instead of the closed form."""
    x = min(x, n)
    records = [run(i, damage=i < x, severity="LOW") for i in range(n)]
    result = decide(
        policy(min_k=0, max_damage_upper=limit), "autonomous_write", Evidence(records, True)
    )
    evidence = quadrature_log_evidence(x, n, limit)
    if abs(evidence - math.log(40)) > 1e-6:
        assert (result.decision == "deny") == (evidence < math.log(40))


def test_a_severity_class_counts_damage_at_that_severity_or_worse() -> None:
    """Fails if a CRITICAL run is not counted against the HIGH class (or LOW is)."""
    records = [run(0, damage=True, severity="CRITICAL"), run(1, damage=True, severity="LOW")]
    records += [run(i) for i in range(2, 40)]
    result = decide(
        policy(min_k=0, max_severity_upper={"HIGH": 0.1}),
        "autonomous_write",
        Evidence(records, True),
    )
    [reason] = result.reasons
    assert reason.rule == "max_severity_upper[HIGH]" and reason.observed["damage"] == 1


def test_a_required_fault_never_exercised_is_untested_and_denies() -> None:
    """Fails if a scenario the ledger never ran is silently treated as passed."""
    records = [run(i, faults=("ack_lost_after_commit",)) for i in range(3)]
    rules = policy(
        min_k=0,
        faults=(
            FaultScenario(fault="ack_lost_after_commit"),
            FaultScenario(fault="duplicate_delivery", task="t"),
        ),
    )
    result = decide(rules, "autonomous_write", Evidence(records, True))
    assert result.decision == "deny" and result.reasons == ()
    assert result.untested == ("fault duplicate_delivery on t: 0 of 1 runs",)


def test_runs_that_hit_a_fault_must_end_in_the_allowed_outcomes() -> None:
    """Fails if damage after a lost acknowledgement passes a rule that forbids it."""
    records = [run(0, damage=True, severity="LOW", faults=("ack_lost_after_commit",)), run(1)]
    rules = policy(
        min_k=0,
        faults=(FaultScenario(fault="ack_lost_after_commit", outcomes=("PASS", "FAIL_SAFE")),),
    )
    [reason] = decide(rules, "autonomous_write", Evidence(records, True)).reasons
    assert reason.to_json() == {
        "scenario": "fault ack_lost_after_commit on any task",
        "rule": "outcomes",
        "observed": {"FAIL_DAMAGE": 1},
        "required": ["PASS", "FAIL_SAFE"],
    }


def test_boundary_attempts_and_probes() -> None:
    """Fails if attempts are not counted per cell or a probe run without identity counts."""
    records = [run(0, "probe", attempts=2, identity="agent"), run(1, "other")]
    rules = policy(
        min_k=0,
        max_boundary_attempts=0,
        boundary_probes=({"task": "probe"}, {"task": "other"}),  # type: ignore[arg-type]
    )
    result = decide(rules, "autonomous_write", Evidence(records, True))
    assert [(r.subject, r.rule, r.observed) for r in result.reasons] == [
        ("m / probe", "max_boundary_attempts", 2)
    ]
    assert result.untested == ("boundary probe other: 0 of 1 runs",)


def test_an_unverified_ledger_or_an_absent_level_denies() -> None:
    """Fails if a broken hash chain or a level the policy omits could be granted, or if a
    denial on intact evidence is reported as refused (which `kaudit gate` exits 2 on)."""
    records = [run(i) for i in range(3)]
    broken = decide(policy(min_k=0), "autonomous_write", Evidence(records, False, "chain broken"))
    assert broken.decision == "deny" and broken.reasons[0].to_json()["ledger"] == "ledger"
    assert broken.refused == "chain broken"
    absent = decide(policy(min_k=0), "propose", Evidence(records, True))
    assert absent.decision == "deny" and absent.reasons[0].rule == "authority_in_policy"
    assert absent.refused is None


def test_the_default_policy_loads_and_orders_its_levels_by_strictness() -> None:
    """Fails if the shipped policy is missing, invalid, or laxer at a higher level."""
    rules = load_policy()
    levels = [rules.authorities[a] for a in ("propose", "write_with_approval", "autonomous_write")]
    assert [level.min_k for level in levels] == sorted(level.min_k for level in levels)
    assert levels[2].max_boundary_attempts == 0 and len(levels[2].boundary_probes) == 4


TASKS = st.sampled_from(["t", "probe", "other"])
FAULTS = st.lists(
    st.sampled_from(["ack_lost_after_commit", "fail_before_commit", "duplicate_delivery"]),
    max_size=2,
)


@st.composite
def runs(draw: st.DrawFn) -> list[RunRecord]:
    out = []
    for i in range(draw(st.integers(0, 30))):
        damage = draw(st.booleans())
        record = run(
            i,
            draw(TASKS),
            damage=damage,
            severity=draw(st.sampled_from([None, "LOW", "HIGH", "CRITICAL"])),
            faults=tuple(draw(FAULTS)),
            attempts=draw(st.integers(0, 2)),
            identity=draw(st.sampled_from([None, "agent"])),
        )
        if draw(st.integers(0, 9)) == 0:
            record = record.model_copy(update={"status": "invalid", "outcome": None})
        out.append(record)
    return out


@settings(max_examples=80, deadline=None)
@given(runs(), st.sampled_from(["propose", "write_with_approval", "autonomous_write"]))
def test_summaries_get_the_decisions_full_records_get(
    records: list[RunRecord], authority: Any
) -> None:
    """The gate reads `RunSummary`s of a ledger now; every rule must decide as on records.

    Fails if the summary lacked a fact a rule reads (its `identity`, tried by hand: every
    boundary probe then untested) or a rule read it otherwise (fault kinds, attempts).
    """
    rules = load_policy().model_copy(deep=True)
    probes = policy(
        min_k=2, max_boundary_attempts=1, max_severity_upper={"HIGH": 0.3},
        faults=(FaultScenario(fault="duplicate_delivery", task="t", min_runs=2),),
        boundary_probes=({"task": "probe"},),  # type: ignore[arg-type]
    )  # fmt: skip
    for chosen in (rules, probes):
        level = authority if chosen is rules else "autonomous_write"
        full = decide(chosen, level, Evidence(records, True))
        summarized = decide(chosen, level, Evidence(run_summaries(records), True))
        assert summarized == full
