"""Stand-in for i36w's door protocol (the agreed shape), replaced by theirs on merge."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kaudit.agents import Episode
from kaudit.spec import FaultRule, Identity


@dataclass(frozen=True)
class HandedWorld:
    """The run's world as the agent's own code reaches it."""

    run_dir: Path
    db_path: Path | None
    database_url: str | None
    episode: Episode
    faults: tuple[FaultRule, ...]
    identity: Identity | None
    seed: int


@dataclass
class DoorEvidence:
    """What a door saw, merged into the run's record by the command session."""

    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)
    boundary_attempts: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


class Door(Protocol):
    """One door of the membrane."""

    async def open(self, world: HandedWorld) -> Mapping[str, str]:
        """Start serving; the environment variables the agent gets."""
        ...

    async def close(self) -> DoorEvidence:
        """Stop serving (after the agent has exited); what was seen."""
        ...
