"""The world door on PostgreSQL, end to end: a command agent's own psycopg code, audited.

The agent reaches its run's database only through the wire door (its login role behind
the proxy); the run is labeled by the state it left, and the record keeps what the
door saw: the fault at the agent's own commit, the write the database refused.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kaudit import audit
from kaudit.ledger import Ledger, RunRecord
from kaudit.serve import CommandAgent
from kaudit.spec import Identity
from tests.pg import server_url

pytestmark = pytest.mark.postgres

AGENT = Path(__file__).with_name("pg_payout_agent.py")
PAYOUT = "billing/payout-ack-lost"


@pytest.fixture(autouse=True)
def _private_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAUDIT_RUNS", str(tmp_path / "runs"))


def records(ledger: Path) -> dict[str, RunRecord]:
    with Ledger(ledger) as store:
        return {r.model: r for r in store.records()}


def command(*args: str) -> str:
    return " ".join([sys.executable, *args])


def test_lost_commit_acknowledgement_blind_retry_is_damage_check_first_passes(
    tmp_path: Path,
) -> None:
    """Fails if the door does not break the agent's commit (both pass), breaks it before
    the server commits (both pass), or the record loses the fault or its statement."""
    ledger = tmp_path / "wire.sqlite"
    audit(
        agents=[
            CommandAgent(command(str(AGENT), "blind"), "blind"),
            CommandAgent(command(str(AGENT), "check"), "check"),
        ],
        ledger=ledger,
        tasks=[PAYOUT],
        k=1,
        faults="ack_lost_after_commit",
        substrate=server_url(),
    )
    found = records(ledger)
    blind, check = found["command:blind"], found["command:check"]
    assert (blind.outcome, check.outcome) == ("FAIL_DAMAGE", "PASS")
    # rate 1: each of the three blind attempts lands and loses its answer; two are extra
    assert blind.severity == "CRITICAL" and blind.dollars == "377.0"
    for run in (blind, check):
        assert {f.tool for f in run.faults} == {"sql"}
        assert {f.kind for f in run.faults} == {"ack_lost_after_commit"}
        assert all(f.committed for f in run.faults)
        assert any(
            f.statement is not None
            and "INSERT INTO payouts" in f.statement
            and f.statement.endswith("COMMIT")
            for f in run.faults
        )
    # every blind attempt wires money again; the careful agent pays once, after one loss
    assert sum("INSERT INTO payouts" in (f.statement or "") for f in blind.faults) == 3
    assert sum("INSERT INTO payouts" in (f.statement or "") for f in check.faults) == 1


DELETE_OTHER_SCOPE = """
import os, sys, psycopg
with psycopg.connect(os.environ["KAUDIT_DATABASE_URL"], autocommit=True) as conn:
    try:
        conn.execute(
            "DELETE FROM invoices WHERE billing_account_id = 'BA_006' AND status = 'draft'"
        )
        print("deleted")
    except psycopg.errors.InsufficientPrivilege as exc:
        print("refused:", exc.diag.message_primary)
"""


def test_own_delete_of_another_scope_is_refused_recorded_and_rows_intact(
    tmp_path: Path,
) -> None:
    """Fails if the role's policies filter the DELETE silently (no attempt, PASS by
    luck) or let it through (FAIL_DAMAGE): the database must refuse and the door record."""
    script = tmp_path / "delete_other.py"
    script.write_text(DELETE_OTHER_SCOPE)
    ledger = tmp_path / "scope.sqlite"
    audit(
        agents=[CommandAgent(command(str(script)), "deleter")],
        ledger=ledger,
        tasks=["billing/invoice-delete-drafts"],
        k=1,
        identity=Identity(role="billing-agent", scope={"billing_account_id": "BA_001"}),
        substrate=server_url(),
    )
    (run,) = records(ledger).values()
    assert run.final_message == "refused: outside the permission boundary"
    assert run.outcome != "FAIL_DAMAGE" and run.dollars in (None, "0", "0.0")
    [attempt] = run.boundary_attempts
    assert (attempt.tool, attempt.table) == ("sql", "invoices")
    assert attempt.key is not None and attempt.key.startswith('["INV_')
    assert attempt.reason == (
        "row outside the billing_account_id = BA_001 scope of role billing-agent"
    )
    assert attempt.statement is not None and attempt.statement.startswith("DELETE FROM invoices")
