"""The membrane's doors: what stands between an external agent and its run's world.

A door forwards what the agent does (SQL on the wire, MCP tool calls, model requests),
records it into the run, applies the run's limits and faults, and is torn down with the
run. The command session opens every door of the run before it starts the agent (the
agent's environment is kaudit's, then the world's variables, then each door's, so a
door may replace `KAUDIT_DATABASE_URL` with its own address) and closes them after the
agent's process group has ended; what they saw is merged into the run's record.

A door never judges: the labeler still reads only the state the run left.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from kaudit._usage import Usage
from kaudit.agents import Episode, RunFacts
from kaudit.errors import KauditError
from kaudit.spec import FaultRule, Identity


@dataclass(frozen=True)
class HandedWorld:
    """The run's world as the agent's own code reaches it.

    Attributes:
        run_dir: The run's private directory (mode 0700), removed with the run; a door
            may put its sockets or files here.
        db_path: SQLite: the world file inside `run_dir`; None on a database server.
        database_url: The URL kaudit hands the agent before any door (PostgreSQL: the
            run's own database as the substrate's user; SQLite: `sqlite:////…`).
        episode: Task, run id, seed and tool specs.
        faults: The run's effective faults (the task's, then the campaign's).
        identity: The run's effective identity, or None.
        seed: The run's seed (a door's random choices derive from it).
    """

    run_dir: Path
    db_path: Path | None
    database_url: str
    episode: Episode
    faults: tuple[FaultRule, ...]
    identity: Identity | None
    seed: int

    @property
    def on_server(self) -> bool:
        """Whether the world is a database on a server (PostgreSQL), not a file."""
        return self.db_path is None

    @classmethod
    def of(cls, episode: Episode) -> HandedWorld:
        """The world handed over in `episode`; an episode without one is a harness error."""
        access = episode.world
        if access is None:
            raise KauditError(f"run {episode.run_id}: no world was handed over")
        return cls(
            run_dir=access.run_dir,
            db_path=access.db_path,
            database_url=access.database_url,
            episode=episode,
            faults=access.faults,
            identity=access.identity,
            seed=episode.seed,
        )

    def environment(self) -> dict[str, str]:
        """The world's variables: where it is, for the agent's own code."""
        variables = {"KAUDIT_DATABASE_URL": self.database_url, "KAUDIT_RUN_DIR": str(self.run_dir)}
        if self.db_path is not None:
            variables["KAUDIT_DB_PATH"] = str(self.db_path)
        return variables


@dataclass
class DoorEvidence:
    """What a door saw, merged into the run's record by the command session.

    `tool_calls` go after the gateway's own in the record's `tool_calls`; `faults` and
    `boundary_attempts` carry the fields of `kaudit.gateway._events.InjectedFault` and
    `BoundaryAttempt` and go after the gateway's; `extra` lands in the record's `extra`
    (a door keys its own facts by its name). Model traffic is counted in `usage`, which
    then replaces the turn sums (`RunFacts`).
    """

    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)
    boundary_attempts: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    final_message: str | None = None
    """The model's last reply, when a door saw it (the model door): the final message of
    an agent that never said `finish`."""
    finish_message: str | None = None
    """What the agent said with `finish`, when a door served it (the tool door); it wins
    over the model's last reply, which may be the text beside a tool call."""
    reached: bool | None = None
    """Whether the agent reached the world through this door, when the door knows (the
    wire door: a connection through it); it then wins over a watcher's guess, which
    would count the door's own sessions on the run's database."""
    transcript: list[dict[str, Any]] = field(default_factory=list)
    """The model's turns, when a door saw them (the model door): the record's transcript."""
    stalled: str | None = None
    """Why a door ended the run early: the tool door refused calls past the run's step
    budget, or the model door's budget was spent. The run is then `stalled` with this
    reason, as a run of kaudit's own loop is at `max_steps`."""

    def merge(self, other: DoorEvidence) -> None:
        """Add `other` after what is here (its `extra` keys win, its message if it has one)."""
        self.tool_calls.extend(other.tool_calls)
        self.faults.extend(other.faults)
        self.boundary_attempts.extend(other.boundary_attempts)
        self.extra.update(other.extra)
        self.usage += other.usage
        self.final_message = other.final_message or self.final_message
        self.finish_message = self.finish_message or other.finish_message
        if other.reached is not None:
            self.reached = bool(self.reached) or other.reached
        self.transcript.extend(other.transcript)
        self.stalled = self.stalled or other.stalled

    @property
    def reached_world(self) -> bool:
        """Whether a door saw the agent act: a tool call, a statement, a model request."""
        seen = self.extra.get("agent", {}).get("world_reached")
        return bool(self.tool_calls or self.usage.api_calls or seen)

    def facts(self) -> RunFacts:
        """The evidence as the agent's run facts, which the record phase merges."""
        return RunFacts(
            usage=self.usage,
            tool_calls=tuple(self.tool_calls),
            faults=tuple(self.faults),
            boundary_attempts=tuple(self.boundary_attempts),
            extra=dict(self.extra),
            transcript=tuple(self.transcript),
        )


@runtime_checkable
class Door(Protocol):
    """One door of one run: opened before the agent starts, closed after it has ended."""

    async def open(self, world: HandedWorld) -> Mapping[str, str]:
        """Start serving; the environment variables the agent gets from this door."""
        ...

    async def close(self) -> DoorEvidence:
        """Stop serving (the agent's process group has ended); what was seen."""
        ...


@runtime_checkable
class WatchedDoor(Door, Protocol):
    """A door the command session watches while the agent runs (the model door).

    `stopping` is set when the door ends the run early (`stop_reason` says why); the
    session then ends the agent and records the run `stalled`. `last_message` is the
    model's last reply so far: the final message of an agent that never said `finish`.
    """

    stopping: asyncio.Event
    stop_reason: str | None

    def last_message(self) -> str | None:
        """The model's last reply so far, if a door saw one."""
        ...


DoorFactory = Callable[[HandedWorld], "Door | None"]
"""Chooses a door for a run from its world (None: this run has no such door)."""


@runtime_checkable
class DescribedDoor(Protocol):
    """A configured door factory that says what it adds, for the campaign's manifest."""

    def __call__(self, world: HandedWorld) -> Door | None:
        """The run's door."""
        ...

    def describe(self) -> dict[str, Any]:
        """The door's configuration (its command, its tags), as the manifest keeps it."""
        ...


def described_doors(doors: Iterable[DoorFactory]) -> list[dict[str, Any]]:
    """What each configured door that can describe itself says, in order."""
    return [door.describe() for door in doors if isinstance(door, DescribedDoor)]


DOORS: list[DoorFactory] = []
"""Every door kind, asked in order for each handed-over run (`register_door`)."""


def register_door(factory: DoorFactory) -> DoorFactory:
    """Add a door kind: `factory(world)` returns the run's door, or None to stand aside.

    A door that depends on the agent's configuration (its `--tools-command`, its
    `--upstream`) is passed to the command agent instead (`CommandAgent(doors=...)`).
    A factory with the attribute `enforces_identity = True` promises that, on a database
    server, the URL its door hands out enforces the run's identity (a login role, its
    grants and row-level security); only then is an identity accepted for an agent
    whose own code reaches the world.
    """
    DOORS.append(factory)
    return factory


def doors_for(world: HandedWorld, configured: Iterable[DoorFactory] = ()) -> list[Door]:
    """The run's doors: the registered kinds, then the agent's own, each if it applies."""
    chosen = (factory(world) for factory in (*DOORS, *configured))
    return [door for door in chosen if door is not None]


async def open_doors(doors: Sequence[Door], world: HandedWorld) -> dict[str, str]:
    """Open each door in order; the variables they add, a later door's winning."""
    variables: dict[str, str] = {}
    for door in doors:
        variables.update(await door.open(world))
    return variables


async def close_doors(doors: Sequence[Door]) -> DoorEvidence:
    """Close every door (each even when another fails) and merge what they saw, in order.

    The first failure is raised after all are closed: a door that cannot say what it
    saw leaves a harness error, never a silently thinner record.
    """
    evidence = DoorEvidence()
    failure: BaseException | None = None
    for door in doors:
        try:
            evidence.merge(await door.close())
        except Exception as exc:  # close the others; raised below
            failure = failure or exc
    if failure is not None:
        raise failure
    return evidence
