"""Which of the agent's own commits meets a fault: the run's rules, drawn by its seed."""

from __future__ import annotations

from kaudit.postgres._wire_faults import WireFaults
from kaudit.spec import FaultRule


def draws(faults: WireFaults, n: int) -> list[str | None]:
    return [faults.draw() for _ in range(n)]


def test_same_seed_same_faults_and_another_seed_others() -> None:
    """Fails if the draw ignores the seed (or uses an unseeded generator)."""
    rules = [FaultRule(kind="ack_lost_after_commit", rate=0.5)]
    first = draws(WireFaults(rules, 7), 40)
    assert first == draws(WireFaults(rules, 7), 40)
    assert first != draws(WireFaults(rules, 8), 40)
    assert {"ack_lost_after_commit", None} == set(first)


def test_limit_caps_injections_and_first_firing_rule_wins() -> None:
    """Fails if `limit` is ignored or a later rule is drawn before an earlier one."""
    rules = [
        FaultRule(kind="fail_before_commit", limit=1),
        FaultRule(kind="timeout_after_commit", limit=2),
    ]
    assert draws(WireFaults(rules, 1), 5) == [
        "fail_before_commit",
        "timeout_after_commit",
        "timeout_after_commit",
        None,
        None,
    ]


def test_rules_that_cannot_act_at_the_wire_never_fire() -> None:
    """Fails if duplicate delivery or a rule narrowed to a named tool fires on raw SQL."""
    rules = [
        FaultRule(kind="duplicate_delivery"),
        FaultRule(kind="ack_lost_after_commit", tools=("send_email",)),
    ]
    assert draws(WireFaults(rules, 3), 10) == [None] * 10
