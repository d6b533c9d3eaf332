"""One emulated EnterpriseOps-Gym server: a seed file plus its domain's registries.

The template (typed tables, seed rows, change capture) is cached by a digest over the
seed bytes, the registries and `EMULATION_VERSION`; tools are built per set of task
selections, acting as the task's `user_info` user.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from kaudit.errors import SpecError
from kaudit.substrate import SqliteSubstrate, StateDump, cached_image, quote
from kaudit.substrate.eog._registry import DomainRegistry, load_registry
from kaudit.substrate.eog._resolve import ToolPlan, column_for, plan_tool
from kaudit.substrate.eog._seed import Seed, read_seed
from kaudit.substrate.eog._shapes import Caller
from kaudit.substrate.eog._tables import (
    TableInfo,
    create_sql,
    declared_affinity,
    json_types,
    storage_classes,
    table_infos,
)
from kaudit.substrate.eog._tools import build_tool

EMULATION_VERSION = "1"
"""Bump when the emulation changes what a template contains."""


@dataclass
class EogWorld:
    """A seed file of one domain, with everything needed to emulate its MCP server."""

    root: Path
    domain: str
    seed_file: Path
    _substrates: dict[tuple[Any, frozenset[str]], SqliteSubstrate] = field(default_factory=dict)

    @cached_property
    def registry(self) -> DomainRegistry:
        """The domain's registries."""
        return load_registry(self.root, self.domain)

    @cached_property
    def seed(self) -> Seed:
        """The parsed seed file."""
        return read_seed(self.seed_file)

    @cached_property
    def tables(self) -> dict[str, TableInfo]:
        """Tables, columns and keys."""
        return table_infos(self.seed, self.registry)

    @property
    def name(self) -> str:
        """`eog-<domain>:<seed file stem>`: one template per seed."""
        return f"eog-{self.domain}:{self.seed_file.stem}"

    def recipe_digest(self) -> str:
        """sha256 over the emulation version, the seed bytes and the registries."""
        parts = (EMULATION_VERSION, self.seed.digest, self.registry.digest)
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    def plan(self, tool: str) -> ToolPlan:
        """The emulation plan of an inventory tool; an unknown tool is an error."""
        spec = self.registry.inventory.get(tool)
        if spec is None:
            raise SpecError(
                f"tool-inventory-{self.domain}.json", tool, "no such tool in the inventory"
            )
        return plan_tool(spec, self.tables, self.registry.tags)

    def type_evidence(self) -> dict[str, dict[str, set[str]]]:
        """JSON types the inventory's schemas give each column (via each tool's table)."""
        evidence: dict[str, dict[str, set[str]]] = {t: {} for t in self.tables}
        for name in self.registry.inventory:
            try:
                plan = self.plan(name)
            except SpecError:
                continue  # a tool no shape fits still says nothing wrong about types
            table = self.tables[plan.table]
            for prop, schema in (*plan.outputs.items(), *plan.inputs.items()):
                if column_for(prop, table) == prop:
                    evidence[table.name].setdefault(prop, set()).update(json_types(schema))
        return evidence

    def affinities(self) -> dict[str, dict[str, str]]:
        """The declared affinity of every column."""
        storage = storage_classes(self.seed)
        evidence = self.type_evidence()
        return {
            t: {
                c: declared_affinity(evidence[t].get(c, set()), storage[t][c]) for c in info.columns
            }
            for t, info in self.tables.items()
        }

    def build(self, conn: sqlite3.Connection) -> None:
        """Create the typed tables and load the seed rows (a duplicate key is an error)."""
        affinities = self.affinities()
        for table in self.tables.values():
            conn.execute(create_sql(table, affinities[table.name]))
        for statement in self.seed.statements:
            try:
                conn.execute(statement.sql)
            except sqlite3.IntegrityError as exc:
                raise SpecError(
                    self.seed_file, statement.table, f"seed rows break the key: {exc}"
                ) from None

    def image(self) -> bytes:
        """The template image, built once per recipe digest."""
        return cached_image(self.recipe_digest(), self.build)

    def caller(self, image: bytes, user_id: Any) -> Caller:
        """The acting user and, when the users table records one, their organization."""
        users = next((t for t in self.tables.values() if t.primary_key == ("user_id",)), None)
        if users is None or user_id is None or not users.has("org_id"):
            return Caller(user_id=user_id)
        conn = StateDump.of(image).open()
        try:
            row = conn.execute(
                f"SELECT org_id FROM {quote(users.name)} WHERE user_id = ?", (user_id,)
            ).fetchone()
        finally:
            conn.close()
        return Caller(user_id=user_id, org_id=row[0] if row else None)

    def substrate(self, tools: Iterable[str], user_id: Any = None) -> SqliteSubstrate:
        """A substrate offering `tools`, acting as `user_id` (built once per combination)."""
        names = frozenset(tools)
        key = (user_id, names)
        if key not in self._substrates:
            image = self.image()
            caller = self.caller(image, user_id)
            volatile = self.volatile()
            built = {
                n: build_tool(self.plan(n), self.tables, caller, volatile) for n in sorted(names)
            }
            self._substrates[key] = SqliteSubstrate(self.name, image, built, volatile)
        return self._substrates[key]

    def volatile(self) -> dict[str, tuple[str, ...]]:
        """The domain's volatile columns, restricted to tables the seed has."""
        return {t: c for t, c in self.registry.volatile.items() if t in self.tables}
