from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaudit.errors import KauditError
from kaudit.faults import FaultLayer
from kaudit.faults._layer import CONNECTION_LOST, TIMED_OUT
from kaudit.faults._parse import parse_faults
from kaudit.gateway import ToolGateway
from kaudit.spec import FaultRule
from kaudit.spec._faults import FAULT_KINDS, FaultKind
from kaudit.substrate._sqlite import SqliteSandbox
from kaudit.tools import ToolContext
from kaudit.worlds._world import get_world


@pytest.fixture
def sandbox() -> Iterator[SqliteSandbox]:
    box = get_world("mini").substrate().seed("faults-test")
    yield box
    box.close()


def gateway_with(
    box: SqliteSandbox, rules: list[FaultRule], seed: int = 0
) -> tuple[ToolGateway, FaultLayer]:
    layer = FaultLayer(rules, seed, box.db)
    return ToolGateway(get_world("mini").tools, ToolContext(db=box.db), [layer]), layer


def outbox(box: SqliteSandbox) -> int:
    row = box.db.one("SELECT COUNT(*) AS n FROM outbox")
    assert row is not None
    return int(row["n"])


SEND = {"recipient": "ops@example.com", "body": "hello"}


@pytest.mark.parametrize(
    ("kind", "error", "rows", "committed", "ok"),
    [
        ("ack_lost_after_commit", CONNECTION_LOST, 1, True, False),
        ("fail_before_commit", CONNECTION_LOST, 0, False, False),
        ("timeout_after_commit", TIMED_OUT, 1, True, False),
        ("duplicate_delivery", None, 2, True, True),
    ],
)
def test_each_fault_leaves_its_own_state_and_record(
    sandbox: SqliteSandbox, kind: FaultKind, error: str | None, rows: int, committed: bool, ok: bool
) -> None:
    """Fails if a fault commits when it must not (or not when it must), or shows the wrong error."""
    gateway, layer = gateway_with(sandbox, [FaultRule(kind=kind)])
    result = gateway.call("c1", "send_message", SEND)
    assert (result.ok, result.error) == (ok, error)
    assert outbox(sandbox) == rows
    [fault] = layer.injected
    assert (fault.kind, fault.committed, fault.tool, fault.call, fault.call_id) == (
        kind,
        committed,
        "send_message",
        0,
        "c1",
    )
    assert fault.applied == rows


def test_reads_are_never_faulted_and_the_limit_caps_injections(sandbox: SqliteSandbox) -> None:
    """Fails if a read draws a fault or `limit` does not stop injection after the first."""
    gateway, layer = gateway_with(sandbox, [FaultRule(kind="ack_lost_after_commit", limit=1)])
    assert gateway.call("r", "get_account", {"account_id": "ACC_000"}).ok
    assert not gateway.call("w1", "send_message", SEND).ok
    assert gateway.call("w2", "send_message", SEND).ok
    assert [f.call_id for f in layer.injected] == ["w1"]
    assert outbox(sandbox) == 2


def test_a_rule_names_the_tools_it_applies_to(sandbox: SqliteSandbox) -> None:
    """Fails if `tools` is ignored and every writing tool draws the fault."""
    rule = FaultRule(kind="fail_before_commit", tools=("send_message",))
    gateway, layer = gateway_with(sandbox, [rule])
    assert gateway.call("u", "update_account", {"account_id": "ACC_000", "status": "x"}).ok
    assert not gateway.call("s", "send_message", SEND).ok
    assert [f.tool for f in layer.injected] == ["send_message"]


def draws(seed: int, rate: float, calls: int = 40) -> list[int]:
    box = get_world("mini").substrate().seed("draws")
    try:
        gateway, layer = gateway_with(
            box, [FaultRule(kind="ack_lost_after_commit", rate=rate)], seed
        )
        for i in range(calls):
            gateway.call(str(i), "send_message", SEND)
        return [f.call for f in layer.injected]
    finally:
        box.close()


def test_draws_come_from_the_run_seed() -> None:
    """Fails if fault draws use an unseeded generator (a resumed run would meet other faults)."""
    assert draws(7, 0.5) == draws(7, 0.5)
    assert draws(7, 0.5) != draws(8, 0.5)
    assert 5 < len(draws(7, 0.5)) < 35


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    kinds=st.lists(st.sampled_from(FAULT_KINDS), min_size=1, max_size=4),
    rate=st.floats(0.05, 1.0),
    calls=st.integers(1, 12),
)
def test_state_always_matches_what_the_faults_say_was_applied(
    seed: int, kinds: list[FaultKind], rate: float, calls: int
) -> None:
    """Fails if any fault's `applied` count disagrees with the rows actually written."""
    box = get_world("mini").substrate().seed("property")
    try:
        rules = [FaultRule(kind=kind, rate=rate) for kind in kinds]
        gateway, layer = gateway_with(box, rules, seed)
        for i in range(calls):
            gateway.call(str(i), "send_message", SEND)
        faulted = {f.call for f in layer.injected}
        expected = sum(f.applied for f in layer.injected) + (calls - len(faulted))
        assert outbox(box) == expected
    finally:
        box.close()


def test_parse_faults_reads_names_and_rates() -> None:
    """Fails if the short form drops a rate or defaults it to anything but 1."""
    rules = parse_faults("ack_lost_after_commit:0.25, duplicate_delivery")
    assert [(r.kind, r.rate) for r in rules] == [
        ("ack_lost_after_commit", 0.25),
        ("duplicate_delivery", 1.0),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("lost_ack", "unknown fault 'lost_ack'"),
        ("ack_lost_after_commit:x", "not a number"),
        ("ack_lost_after_commit:1.5", "must be in (0, 1]"),
        (" , ", "at least one"),
    ],
)
def test_parse_faults_rejects_bad_input_in_one_line(text: str, message: str) -> None:
    """Fails if bad --faults input passes or raises something other than a KauditError."""
    with pytest.raises(KauditError, match=None) as caught:
        parse_faults(text)
    assert message in str(caught.value) and "\n" not in str(caught.value)
