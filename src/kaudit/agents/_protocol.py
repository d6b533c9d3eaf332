"""The agent extension point: anything that turns observations into tool calls."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from kaudit._usage import Usage
from kaudit.spec import FaultRule, Identity, Task


@dataclass(frozen=True)
class ToolCall:
    """A tool call the agent asked for. `arguments` is the raw string when it was not JSON."""

    id: str
    name: str
    arguments: dict[str, Any] | str


@dataclass(frozen=True)
class Turn:
    """One agent turn: tool calls to execute, or a final message when there are none.

    `stalled` marks a turn that did no work (the agent is spinning); the step budget
    still counts it, so a spinning agent ends as `stalled`.
    """

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    """What the turn cost: its tokens, dollars and retries (its calls are the run's)."""
    stalled: bool = False


@dataclass(frozen=True)
class Observation:
    """The result of one tool call, as text the agent reads."""

    call: ToolCall
    ok: bool
    text: str


@dataclass(frozen=True)
class WorldAccess:
    """The run's world where an agent's own code reaches it (`Episode.world`).

    Attributes:
        run_dir: The run's private directory, removed with the run.
        db_path: SQLite: the world file inside `run_dir`; None on a database server.
        database_url: The URL the agent's code connects with.
        faults: The run's effective faults (a door in front of the world injects them).
        identity: The run's effective identity (a door enforces it), or None.
    """

    run_dir: Path
    db_path: Path | None
    database_url: str
    faults: tuple[FaultRule, ...] = ()
    identity: Identity | None = None


@dataclass(frozen=True)
class Episode:
    """What an agent is given for one run.

    `world` is set only for an agent that asked for it (`WorldAgent`): the run's world,
    handed over before the first turn and taken back after the session closes.
    """

    task: Task
    run_id: str
    seed: int
    tool_specs: tuple[dict[str, Any], ...]
    world: WorldAccess | None = None


@runtime_checkable
class WorldAgent(Protocol):
    """An agent whose own code reaches the run's world (a command agent)."""

    reaches_world: bool
    """True: each run's world is handed over (`Episode.world`) before its first turn."""
    world_required: bool
    """True: the world handed over is its only way in (no kaudit tools to fall back on)."""
    watch_reach: bool
    """Look at a server's sessions during each run to see a read (the preflight sets it)."""

    def enforces_identity(self, on_server: bool) -> bool:
        """Whether the world it is handed enforces the run's identity (a door's login role)."""
        ...


@runtime_checkable
class AgentSession(Protocol):
    """One run's conversation with the agent."""

    async def next_turn(self, observations: Sequence[Observation]) -> Turn:
        """The next turn given the results of the previous turn's tool calls.

        Raises `AgentError` when no turn can be produced (the run ends `errored`).
        """
        ...

    async def aclose(self) -> None:
        """Release connections held for this run."""
        ...


@dataclass(frozen=True)
class RunFacts:
    """What an agent kept about one run outside its turns.

    A chat agent's last API call can fail after retries: no turn carries those tokens
    and retries, so `usage` replaces the turn sums when it counts any API calls.
    """

    usage: Usage = field(default_factory=Usage)
    """The run's model usage; its `model_ms` includes retries and backoff."""
    tool_calls: tuple[dict[str, Any], ...] = ()
    """Calls seen outside kaudit's own gateway (a door in front of a third-party server)."""
    faults: tuple[dict[str, Any], ...] = ()
    """Faults injected outside the gateway (`InjectedFault` fields), in order."""
    boundary_attempts: tuple[dict[str, Any], ...] = ()
    """Writes refused outside the gateway (`BoundaryAttempt` fields), in order."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Facts for the record's `extra` (the agent's output, what each door saw)."""
    transcript: tuple[dict[str, Any], ...] = ()
    """The model's turns as a door saw them (the model proxy); when present they are the
    record's transcript, in place of the harness loop's turns."""


@runtime_checkable
class Agent(Protocol):
    """A model (or simulated model) under audit. `name` is the ledger's model key.

    Everything the harness uses is here; `AgentDefaults` supplies the members a simple
    agent has nothing to say about.
    """

    name: str
    simulated: bool

    @property
    def max_concurrent_runs(self) -> int | None:
        """This model's cap on runs in flight (a provider's limit), or None."""
        ...

    def start(self, episode: Episode) -> AgentSession:
        """Begin one run."""
        ...

    def describe(self) -> dict[str, Any]:
        """Configuration for the provenance manifest (no secrets)."""
        ...

    def sampling(self) -> dict[str, Any] | None:
        """Sampling parameters every run uses, recorded with each run; None if none."""
        ...

    def run_facts(self, run_id: str) -> RunFacts | None:
        """Totals of run `run_id`, taken once after it ends; None when the agent keeps none."""
        ...

    async def aclose(self) -> None:
        """Release connections held on the current event loop."""
        ...


class AgentDefaults:
    """The optional members of `Agent` for agents without rate caps, sampling or clients."""

    @property
    def max_concurrent_runs(self) -> int | None:
        """No cap of its own."""
        return None

    def sampling(self) -> dict[str, Any] | None:
        """No sampling parameters."""
        return None

    def run_facts(self, run_id: str) -> RunFacts | None:
        """No totals beyond the turns."""
        return None

    async def aclose(self) -> None:
        """Nothing to release."""
