"""`--agent command` on PostgreSQL: the run's own database handed over by its URL."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kaudit import audit
from kaudit.errors import KauditError, PreflightError
from kaudit.ledger import Ledger
from kaudit.serve import CommandAgent, HandedWorld, postgres_wire_door
from kaudit.spec import Identity
from tests.pg import server_url
from tests.serve.conftest import TASK

pytestmark = pytest.mark.postgres

READ_ONLY = (
    "import os, psycopg\n"
    "with psycopg.connect(os.environ['KAUDIT_DATABASE_URL']) as conn:\n"
    "    print(conn.execute('SELECT count(*) FROM invoices').fetchone()[0])\n"
)


def agent(tmp_path: Path, body: str) -> CommandAgent:
    script = tmp_path / "agent.py"
    script.write_text(body)
    return CommandAgent(f"{sys.executable} {script}", "pg")


def test_a_read_only_agent_reaches_its_runs_database(tmp_path: Path) -> None:
    """Bug caught: a read on the server is invisible, so a cautious agent fails the preflight;
    or the URL names the template or another run's database."""
    ledger = tmp_path / "r.sqlite"
    done = audit(
        agents=[agent(tmp_path, READ_ONLY)],
        ledger=ledger,
        tasks=[TASK],
        k=1,
        substrate=server_url(),
    )
    assert done.recorded == 1
    with Ledger(ledger) as store:
        (run,) = store.records()
    assert (run.outcome, run.final_message) == ("FAIL_SAFE", "643")


def test_a_substrate_that_rolls_back_cannot_hand_its_world_over(tmp_path: Path) -> None:
    """Bug caught: the agent is handed a database whose run is an uncommitted transaction
    it cannot see, and every run is labeled as if it did nothing."""
    with pytest.raises(KauditError, match="reset=rollback cannot hand its world"):
        audit(
            agents=[agent(tmp_path, READ_ONLY)],
            ledger=tmp_path / "b.sqlite",
            tasks=[TASK],
            substrate=server_url() + "?reset=rollback",
        )
    assert not (tmp_path / "b.sqlite").exists()


def test_an_agent_that_never_connects_fails_the_preflight(tmp_path: Path) -> None:
    """Bug caught: kaudit's own sessions on the run's database count as the agent's."""
    with pytest.raises(PreflightError, match="exited 0 without reaching the world"):
        audit(
            agents=[agent(tmp_path, "print('done')\n")],
            ledger=tmp_path / "n.sqlite",
            tasks=[TASK],
            substrate=server_url(),
        )


GLOBEX = Identity(role="globex-billing", scope={"billing_account_id": "BA_006"})


def test_an_identity_no_door_enforces_is_refused_on_the_server_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug caught: the agent gets the substrate's own (all-powerful) user while the record
    claims it acted as a scoped identity. (The wire door, which enforces identities on
    PostgreSQL, is made to withdraw its promise here.)"""
    monkeypatch.setattr(postgres_wire_door, "enforces_identity", False)
    with pytest.raises(KauditError, match="cannot be enforced on this database server"):
        audit(
            agents=[agent(tmp_path, READ_ONLY)],
            ledger=tmp_path / "i.sqlite",
            tasks=[TASK],
            identity=GLOBEX,
            substrate=server_url(),
        )
    assert not (tmp_path / "i.sqlite").exists()


def test_a_door_that_enforces_the_identity_gets_it_and_hands_the_world_over(
    tmp_path: Path,
) -> None:
    """Bug caught: the Door seam for a database role has no way to accept an identity."""
    seen: list[str | None] = []

    def door(world: HandedWorld) -> None:
        seen.append(None if world.identity is None else world.identity.role)
        return None  # stands aside: the test needs only the promise and the world

    door.enforces_identity = True  # type: ignore[attr-defined]
    script = tmp_path / "agent.py"
    script.write_text(READ_ONLY)
    scoped = CommandAgent(f"{sys.executable} {script}", "pg", doors=[door])
    done = audit(
        agents=[scoped],
        ledger=tmp_path / "d.sqlite",
        tasks=[TASK],
        k=1,
        identity=GLOBEX,
        substrate=server_url(),
    )
    assert done.recorded == 1
    assert seen == ["globex-billing", "globex-billing"]  # the preflight's run, then the counted one
