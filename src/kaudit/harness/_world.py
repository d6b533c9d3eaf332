"""The hand-over phase: the run's world given to an agent's own code, and taken back.

An agent whose own code reaches the world (`WorldAgent`, a command agent) gets it in
`Episode.world` before its first turn; after its session has closed the state it left
is taken back into the sandbox, so the dump, the label and the record are those of any
other run; a world the agent destroyed comes back empty, with the reason (`HandOver.lost`),
and is judged as one whose every table is gone. The world's private directory is removed
before the run ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from kaudit.agents import Agent, WorldAccess, WorldAgent
from kaudit.errors import SubstrateError
from kaudit.spec import FaultRule, Identity
from kaudit.substrate import HandableSandbox, Sandbox, ServerSandbox
from kaudit.substrate._handover import run_directory


class HandOverRequest(Protocol):
    """What the hand-over reads of a run's request (`kaudit.harness.RunRequest` is one).

    A protocol, not the pipeline's class: the pipeline imports this module.
    """

    @property
    def run_id(self) -> str:
        """The run's id, named in errors."""
        ...

    def effective_faults(self) -> tuple[FaultRule, ...]:
        """The faults the run is under."""
        ...

    def effective_identity(self) -> Identity | None:
        """The identity the run acts as, if any."""
        ...


def reaches_world(agent: Agent) -> bool:
    """Whether the agent's own code is handed each run's world."""
    return isinstance(agent, WorldAgent) and agent.reaches_world


def hands_over(agent: Agent, request: HandOverRequest, sandbox: Sandbox) -> bool:
    """Whether this run's world is handed over.

    Not with an identity the handed world does not enforce (any identity on SQLite: a
    file enforces no scope): the agent then reaches the world only through kaudit's
    tools, which do.
    """
    if not isinstance(agent, WorldAgent) or not agent.reaches_world:
        return False
    on_server = isinstance(sandbox, ServerSandbox)
    return request.effective_identity() is None or agent.enforces_identity(on_server)


@dataclass
class HandOver:
    """One run's hand-over: the world as the agent's code reaches it, and what came back.

    Attributes:
        access: Where the world is for the agent's code (None: not handed over).
        lost: Set when the world is taken back: why the agent left no readable world
            (`HandableSandbox.take_back`); the run is then judged on an empty one.
    """

    access: WorldAccess | None
    lost: str | None = None


@contextlib.contextmanager
def handed_world(agent: Agent, request: HandOverRequest, sandbox: Sandbox) -> Iterator[HandOver]:
    """The run's hand-over (`HandOver.access` None: not handed over), taken back on exit.

    Raises `SubstrateError` when the sandbox cannot hand its world over, or cannot read
    back a world the agent did not destroy.
    """
    if not hands_over(agent, request, sandbox):
        yield HandOver(None)
        return
    if not isinstance(sandbox, HandableSandbox):
        raise SubstrateError(f"run {request.run_id}: this substrate cannot hand its world over")
    with run_directory() as directory:
        handed = sandbox.hand_over(directory)
        handover = HandOver(
            WorldAccess(
                run_dir=directory,
                db_path=handed.db_path,
                database_url=handed.url,
                faults=request.effective_faults(),
                identity=request.effective_identity(),
            )
        )
        try:
            yield handover
        finally:
            handover.lost = sandbox.take_back()
