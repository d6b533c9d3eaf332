"""The extension points: a resettable world (`Substrate`) and one run's world (`Sandbox`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from kaudit.substrate._db import Db
from kaudit.substrate._dump import StateDump
from kaudit.substrate._tool import Tool


@runtime_checkable
class Sandbox(Protocol):
    """One run's isolated database: tools act on `db`, `dump()` captures the result."""

    run_id: str
    db: Db
    initial: StateDump

    def dump(self) -> StateDump:
        """The full state now, with its schema; taken before `close()`."""
        ...

    def close(self) -> None:
        """Release the sandbox; its state is gone afterwards."""
        ...


@runtime_checkable
class Substrate(Protocol):
    """A world that can be seeded afresh for every run."""

    name: str
    tools: Mapping[str, Tool]
    volatile: Mapping[str, tuple[str, ...]]

    @property
    def template_digest(self) -> str:
        """sha256 of the seeded state every sandbox must start from."""
        ...

    def seed(self, run_id: str) -> Sandbox:
        """A fresh sandbox whose state equals the template (drift raises SeedDriftError)."""
        ...
