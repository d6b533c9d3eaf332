"""The extension points: a resettable world (`Substrate`) and one run's world (`Sandbox`).

Capabilities a sandbox may add are protocols of their own, so whoever needs one asks
with `isinstance` instead of probing attributes: `ServerSandbox` (its server and
schema) and `GuardedSandbox` (its substrate's enforcement of an identity, a `Guard`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from kaudit.spec import Identity
from kaudit.substrate._dump import Dump, StateDump
from kaudit.substrate._schema import ForeignKey, Schema
from kaudit.tools import Db, Tool


@runtime_checkable
class Sandbox(Protocol):
    """One run's isolated database: tools act on `db`, `dump()` captures the result."""

    @property
    def run_id(self) -> str:
        """Identifies the run this sandbox belongs to."""
        ...

    @property
    def db(self) -> Db:
        """The handle tools act through."""
        ...

    @property
    def initial(self) -> StateDump:
        """The seeded state, before the agent acted."""
        ...

    def dump(self) -> Dump:
        """The final state, with its schema; taken before `close()`, unchangeable after.

        A sandbox may refuse writes once dumped (SQLite freezes the state in place).
        """
        ...

    def close(self) -> None:
        """Release the sandbox; its state is gone afterwards."""
        ...


@runtime_checkable
class ServerSandbox(Sandbox, Protocol):
    """A sandbox in its own database on a server: a boundary there is the server's roles."""

    @property
    def server(self) -> str:
        """The server URL (a boundary creates its role there)."""
        ...

    @property
    def schema(self) -> Schema:
        """The world's schema, as the server holds it."""
        ...


@dataclass(frozen=True)
class Denial:
    """One refused access: the table, the row's key when the guard knows it, and why."""

    table: str
    key: str | None
    reason: str


class Guard(Protocol):
    """A substrate's enforcement of one identity on one sandbox: on per call, read after it.

    For each tool call the boundary layer clears it (`take()`), calls `enter()` inside the
    call's transaction and `take()` again before the transaction ends: any denial rolls
    the whole call back and is recorded as an attempt. `leave()` comes after, always.
    """

    def take(self) -> list[Denial]:
        """The denials since the last call, deduplicated in order."""
        ...

    def enter(self) -> None:
        """Switch the identity on for one call's statements (inside its transaction)."""
        ...

    def leave(self) -> None:
        """Switch it off again once the call's transaction has ended."""
        ...


@runtime_checkable
class GuardedSandbox(Sandbox, Protocol):
    """A sandbox whose substrate can enforce an identity on it, in its own way."""

    def guard(self, identity: Identity, ownership: Sequence[ForeignKey] = ()) -> Guard:
        """Install `identity`'s boundary on this sandbox and return what enforces it.

        `ownership` adds the keys the world declares (its substrate's `ownership`) to the
        schema's own, for the scope to follow. Raises `SubstrateError` when this sandbox
        cannot enforce this identity.
        """
        ...


@runtime_checkable
class Substrate(Protocol):
    """A world that can be seeded afresh for every run."""

    @property
    def name(self) -> str:
        """Names the world, for manifests and errors."""
        ...

    @property
    def tools(self) -> Mapping[str, Tool]:
        """Every tool of the world by name; a task offers a subset."""
        ...

    @property
    def volatile(self) -> Mapping[str, tuple[str, ...]]:
        """Columns per table that change by themselves."""
        ...

    @property
    def ownership(self) -> tuple[ForeignKey, ...]:
        """Links the world declares beyond its schema's foreign keys (empty when none).

        A boundary's scope follows them as it follows the schema's own.
        """
        ...

    @property
    def template(self) -> StateDump:
        """The seeded state every sandbox starts from, as a SQLite image (the labeler's input)."""
        ...

    @property
    def template_digest(self) -> str:
        """sha256 of the seeded state every sandbox must start from."""
        ...

    def seed(self, run_id: str) -> Sandbox:
        """A fresh sandbox whose state equals the template (drift raises SeedDriftError)."""
        ...

    def derive(self, image: bytes) -> Substrate:
        """The same kind of substrate (same tools, same server) over another template image.

        Tasks that add rows to the world (extra rows, distractor variants) start from
        a derived template, on whichever substrate the campaign chose.
        """
        ...

    def describe(self) -> dict[str, Any]:
        """How runs get their world, for the campaign manifest.

        At least `reset`: `copy` (SQLite's in-memory copy), `clone` or `rollback` (PostgreSQL).
        """
        ...

    def reclaim(self, campaign: str) -> int:
        """Remove what runs of `campaign` left behind when killed; returns how many were removed.

        Called when a campaign starts or resumes. Another process (another ledger, another
        machine) may be running a campaign of the same name right now: remove only what
        no live process owns.
        """
        ...
