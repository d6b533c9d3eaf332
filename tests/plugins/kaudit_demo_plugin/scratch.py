"""A third-party substrate, `--substrate scratch`: each run on a plain in-memory copy.

Written only against kaudit's public names (`kaudit.substrate`, `kaudit.tools`), as a
package outside kaudit would write it; kaudit finds it through its `kaudit.substrates`
entry point. It counts the sandboxes it seeds, so a test can tell it was used. Its
sandboxes bring their own boundary (`guard`, a `ReadBackGuard`), so a run on it can act
as an identity.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from kaudit.errors import SeedDriftError
from kaudit.spec import Identity
from kaudit.substrate import Blueprint, ForeignKey, SqliteDb, StateDump
from kaudit.tools import Tool
from kaudit_demo_plugin.read_back import ReadBackGuard

SEEDED: list[str] = []
"""Run ids of every sandbox this substrate seeded, in order (this process only)."""


class ScratchSandbox:
    """One run's in-memory database, copied from the template image."""

    def __init__(self, run_id: str, template: StateDump) -> None:
        self.run_id = run_id
        self.initial = template
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.deserialize(template.image)
        self.db = SqliteDb(self._conn)

    def guard(self, identity: Identity, ownership: Sequence[ForeignKey] = ()) -> ReadBackGuard:
        """This substrate's own boundary for `identity` (declared links are not followed)."""
        return ReadBackGuard(self._conn, identity)

    def dump(self) -> StateDump:
        """The final state as a fresh image."""
        return StateDump.of(self._conn.serialize())

    def close(self) -> None:
        """Drop the in-memory database."""
        self._conn.close()


class ScratchSubstrate:
    """A world's template image, copied afresh for every run."""

    def __init__(self, blueprint: Blueprint) -> None:
        self.blueprint = blueprint
        self.template = StateDump.of(blueprint.image)

    @property
    def name(self) -> str:
        return self.blueprint.name

    @property
    def tools(self) -> Mapping[str, Tool]:
        return self.blueprint.tools

    @property
    def volatile(self) -> Mapping[str, tuple[str, ...]]:
        return self.blueprint.volatile

    @property
    def ownership(self) -> tuple[ForeignKey, ...]:
        return self.blueprint.ownership

    @property
    def template_digest(self) -> str:
        return self.template.digest

    def seed(self, run_id: str) -> ScratchSandbox:
        sandbox = ScratchSandbox(run_id, self.template)
        if StateDump.of(sandbox.db.conn.serialize()).digest != self.template_digest:
            sandbox.close()
            raise SeedDriftError(f"{self.name}: run {run_id} did not start from the template")
        SEEDED.append(run_id)
        return sandbox

    def derive(self, image: bytes) -> ScratchSubstrate:
        return ScratchSubstrate(
            Blueprint(self.name, image, self.tools, self.volatile, ownership=self.ownership)
        )

    def describe(self) -> dict[str, Any]:
        return {"reset": "copy", "plugin": "kaudit-demo-plugin"}

    def reclaim(self, campaign: str) -> int:
        return 0  # nothing outlives this process


def scratch_substrate(choice: str, blueprint: Blueprint) -> ScratchSubstrate:
    """The `kaudit.substrates` factory: `choice` is the string the user gave (`scratch`)."""
    return ScratchSubstrate(blueprint)
