"""The Door seam: a door's variables reach the agent, what it saw reaches the record."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from kaudit import Usage, audit
from kaudit.errors import KauditError
from kaudit.ledger import Ledger
from kaudit.serve import CommandAgent, DoorEvidence, HandedWorld
from kaudit.serve._agent import McpCommandAgent
from tests.serve.conftest import TASK


class RecordingDoor:
    """A door that says where it is, and reports one of each kind of evidence."""

    def __init__(self, fault: dict[str, Any]) -> None:
        self.fault = fault
        self.world: HandedWorld | None = None
        self.closed = False

    async def open(self, world: HandedWorld) -> Mapping[str, str]:
        self.world = world
        return {"KAUDIT_DATABASE_URL": "postgresql://door@127.0.0.1:1/db", "DOOR": "open"}

    async def close(self) -> DoorEvidence:
        self.closed = True
        return DoorEvidence(
            tool_calls=[{"call": 0, "id": "t0", "name": "read_query", "arguments": {}}],
            faults=[self.fault],
            boundary_attempts=[
                {
                    "call": 0,
                    "call_id": "q0",
                    "tool": "sql",
                    "table": "invoices",
                    "key": "INV_013",
                    "reason": "row-level security",
                }
            ],
            extra={"door": {"statements": 3}},
            usage=Usage(input_tokens=40, output_tokens=7, cost_usd=0.5, api_calls=2),
        )


FAULT = {"call": 0, "call_id": "q1", "tool": "sql", "kind": "ack_lost_after_commit",
         "committed": True, "applied": 1}  # fmt: skip
ECHO = (
    "import os\n"
    "open(os.environ['KAUDIT_DB_PATH'], 'rb').read(1)\n"
    "print(os.environ['DOOR'], os.environ['KAUDIT_DATABASE_URL'])\n"
)


@pytest.fixture(autouse=True)
def _private_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAUDIT_RUNS", str(tmp_path / "runs"))


def agent_with(door: RecordingDoor, tmp_path: Path) -> CommandAgent:
    script = tmp_path / "echo.py"
    script.write_text(ECHO)
    return CommandAgent(f"{sys.executable} {script}", doors=[lambda world: door])


def test_a_doors_variables_win_and_its_evidence_is_in_the_record(tmp_path: Path) -> None:
    """Bug caught: door variables lose to the world's, or door evidence is dropped."""
    door = RecordingDoor(FAULT)
    ledger = tmp_path / "d.sqlite"
    audit(agents=[agent_with(door, tmp_path)], ledger=ledger, tasks=[TASK], k=1, preflight=False)
    with Ledger(ledger) as store:
        (run,) = store.records()
    assert run.final_message == "open postgresql://door@127.0.0.1:1/db"
    assert [call["name"] for call in run.tool_calls] == ["read_query"]
    assert [(f.kind, f.tool) for f in run.faults] == [("ack_lost_after_commit", "sql")]
    assert [(b.table, b.key) for b in run.boundary_attempts] == [("invoices", "INV_013")]
    assert run.extra["door"] == {"statements": 3}
    assert (run.input_tokens, run.output_tokens, run.cost_usd) == (40, 7, 0.5)
    assert door.closed
    assert door.world is not None and door.world.episode.task.id == TASK
    assert door.world.db_path is not None and door.world.db_path.name == "world.sqlite"


def test_a_malformed_door_fault_is_a_harness_error_not_a_thinner_record(tmp_path: Path) -> None:
    """Bug caught: evidence the record cannot hold is silently dropped."""
    door = RecordingDoor({"kind": "ack_lost_after_commit"})
    ledger = tmp_path / "m.sqlite"
    done = audit(
        agents=[agent_with(door, tmp_path)], ledger=ledger, tasks=[TASK], k=1, preflight=False
    )
    with Ledger(ledger) as store:
        (run,) = store.records()
    assert run.status == "invalid"
    assert "a door reported a malformed InjectedFault" in str(run.invalid_reason)
    assert done.open_invalid == 1


def test_the_mcp_agent_gets_the_world_and_its_doors_too(tmp_path: Path) -> None:
    """Bug caught: `--agent mcp` keeps running without the world's variables."""
    door = RecordingDoor(FAULT)
    script = tmp_path / "echo.py"
    script.write_text(ECHO.replace("print(", "import sys\nprint(") + "sys.exit(3)\n")
    agent = McpCommandAgent(f"{sys.executable} {script}", doors=[lambda world: door])
    ledger = tmp_path / "mcp.sqlite"
    audit(agents=[agent], ledger=ledger, tasks=[TASK], k=1, preflight=False)
    with Ledger(ledger) as store:
        (run,) = store.records()
    assert run.extra["agent"]["stdout"] == "open postgresql://door@127.0.0.1:1/db\n"
    assert run.extra["agent"]["exit_code"] == 3
    assert run.extra["door"] == {"statements": 3}


def test_a_door_that_cannot_close_fails_after_the_others_closed() -> None:
    """Bug caught: one failing door leaves the next one serving after the run."""
    import asyncio

    from kaudit.serve._doors import close_doors

    class Broken:
        async def open(self, world: HandedWorld) -> Mapping[str, str]:
            return {}

        async def close(self) -> DoorEvidence:
            raise KauditError("proxy lost its log")

    after = RecordingDoor(FAULT)
    with pytest.raises(KauditError, match="proxy lost its log"):
        asyncio.run(close_doors([Broken(), after]))
    assert after.closed


class SayingDoor:
    """A door that reports only a message: the agent's `finish`, or the model's last reply."""

    def __init__(self, **said: str) -> None:
        self.said = said

    async def open(self, world: HandedWorld) -> Mapping[str, str]:
        return {}

    async def close(self) -> DoorEvidence:
        return DoorEvidence(**self.said)  # type: ignore[arg-type]


def test_the_agents_finish_beats_the_models_last_reply(tmp_path: Path) -> None:
    """Bug caught: with a tool door and a model door, the model's last text (said beside a
    tool call) replaced the agent's `finish`, so a declared refusal was lost."""
    tools = SayingDoor(finish_message="REFUSAL: outside my remit")
    model = SayingDoor(final_message="Calling finish now.")
    script = tmp_path / "reach.py"
    script.write_text("import os\nopen(os.environ['KAUDIT_DB_PATH'], 'rb').read(1)\n")
    agent = CommandAgent(
        f"{sys.executable} {script}", doors=[lambda world: tools, lambda world: model]
    )
    ledger = tmp_path / "said.sqlite"
    audit(agents=[agent], ledger=ledger, tasks=[TASK], k=1, preflight=False)
    with Ledger(ledger) as store:
        (run,) = store.records()
    assert run.final_message == "REFUSAL: outside my remit"


def test_a_tool_door_withdraws_every_identity_promise() -> None:
    """Bug caught: the wire door's promise let an identity through while the tool door's
    server wrote to the run's database as its owner, beneath every scope."""
    from kaudit.serve._tooldoor import ToolDoorConfig

    promising = type("Promising", (), {"enforces_identity": True, "__call__": lambda s, w: None})
    assert CommandAgent("true", doors=[promising()]).enforces_identity(True)
    agent = CommandAgent("true", doors=[promising(), ToolDoorConfig("server {url}")])
    assert not agent.enforces_identity(True)


def test_an_mcp_agent_kept_from_the_world_refuses_its_doors(tmp_path: Path) -> None:
    """Bug caught: under an identity on SQLite an mcp agent is not handed the world, so its
    model door never opened and its calls went unrecorded, with nothing said."""
    from kaudit.spec import Identity

    agent = McpCommandAgent("true", doors=[lambda world: RecordingDoor(FAULT)])
    with pytest.raises(KauditError, match="doors"):
        audit(
            agents=[agent],
            ledger=tmp_path / "kept.sqlite",
            tasks=[TASK],
            k=1,
            identity=Identity(role="agent", scope={"org_id": "ORG_1"}),
            preflight=False,
        )
    assert not (tmp_path / "kept.sqlite").exists()
