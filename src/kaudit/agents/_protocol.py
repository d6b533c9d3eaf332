"""The agent extension point: anything that turns observations into tool calls."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from kaudit.spec import Task


@dataclass(frozen=True)
class ToolCall:
    """A tool call the agent asked for. `arguments` is the raw string when it was not JSON."""

    id: str
    name: str
    arguments: dict[str, Any] | str


@dataclass(frozen=True)
class Usage:
    """What one turn cost: tokens, dollars at the configured prices, and API retries."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    retries: int = 0


@dataclass(frozen=True)
class Turn:
    """One agent turn: tool calls to execute, or a final message when there are none.

    `stalled` marks a turn that did no work (the agent is spinning); the step budget
    still counts it, so a spinning agent ends as `stalled`.
    """

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    stalled: bool = False


@dataclass(frozen=True)
class Observation:
    """The result of one tool call, as text the agent reads."""

    call: ToolCall
    ok: bool
    text: str


@dataclass(frozen=True)
class Episode:
    """What an agent is given for one run."""

    task: Task
    run_id: str
    seed: int
    tool_specs: tuple[dict[str, Any], ...]


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


@runtime_checkable
class Agent(Protocol):
    """A model (or simulated model) under audit. `name` is the ledger's model key."""

    name: str
    simulated: bool

    def start(self, episode: Episode) -> AgentSession:
        """Begin one run."""
        ...

    def describe(self) -> dict[str, Any]:
        """Configuration for the provenance manifest (no secrets)."""
        ...
