"""One emulated EnterpriseOps-Gym server: a seed file plus its domain's registries.

The template (typed tables, seed rows, change capture) is cached by a digest over the
seed bytes, the registries and `EMULATION_VERSION`; tools are built per set of task
selections, acting as the task's `user_info` user.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from kaudit.errors import SpecError
from kaudit.substrate import Blueprint, StateDump, Substrate, cached_image, quote
from kaudit.substrate._choice import DEFAULT_SUBSTRATE, open_substrate
from kaudit.tools import Tool
from kaudit.worlds.eog._registry import DomainRegistry, load_registry
from kaudit.worlds.eog._resolve import CREATING_SHAPES, ToolPlan, column_for, plan_tool
from kaudit.worlds.eog._seed import Seed, read_seed
from kaudit.worlds.eog._shapes import Caller, IdScheme, id_scheme
from kaudit.worlds.eog._tables import (
    TableInfo,
    create_sql,
    declared_affinity,
    json_types,
    storage_classes,
    table_infos,
)
from kaudit.worlds.eog._tools import build_tool

EMULATION_VERSION = "1"
"""Bump when the emulation changes what a template contains."""


@dataclass
class EogWorld:
    """A seed file of one domain, with everything needed to emulate its MCP server."""

    domain: str
    seed_file: Path
    registry: DomainRegistry
    """The domain's registries, loaded once per domain by whoever builds the worlds."""
    _substrates: dict[tuple[str, Any, frozenset[str]], Substrate] = field(
        default_factory=dict, init=False, repr=False
    )
    _id_schemes: dict[str, IdScheme | None] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def load(cls, root: Path, domain: str, seed_file: Path) -> EogWorld:
        """The world of `seed_file`, with the registries of `domain` read from `root`."""
        return cls(domain, seed_file, load_registry(root, domain))

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

    @cached_property
    def image(self) -> bytes:
        """The template image, built (or read from the cache) once per recipe digest."""
        return cached_image(self.recipe_digest(), self.build)

    def caller(self, template: StateDump, user_id: Any) -> Caller:
        """Who `user_id` acts as: their organization, when the users table records one."""
        users = next((t for t in self.tables.values() if t.primary_key == ("user_id",)), None)
        if users is None or user_id is None or not users.has("org_id"):
            return Caller()
        conn = template.open()
        try:
            row = conn.execute(
                f"SELECT org_id FROM {quote(users.name)} WHERE user_id = ?", (user_id,)
            ).fetchone()
        finally:
            conn.close()
        return Caller(org_id=row[0] if row else None)

    def id_schemes(self, template: StateDump, tables: Iterable[str]) -> dict[str, IdScheme | None]:
        """The key scheme of each single-key table in `tables`, read from the seed rows once."""
        wanted = [t for t in dict.fromkeys(tables) if len(self.tables[t].primary_key) == 1]
        missing = [t for t in wanted if t not in self._id_schemes]
        if missing:
            conn = template.open()
            try:
                for table in missing:
                    column = self.tables[table].primary_key[0]
                    keys = conn.execute(f"SELECT {quote(column)} FROM {quote(table)}")
                    self._id_schemes[table] = id_scheme(column, (k for (k,) in keys))
            finally:
                conn.close()
        return {t: self._id_schemes[t] for t in wanted}

    @property
    def source_database(self) -> str | None:
        """None: built from the seed file into a SQLite image."""
        return None

    def template_image(self) -> bytes:
        """The template image (the `World` protocol's name for `image`)."""
        return self.image

    def toolset(
        self, names: Collection[str] | None = None, acting_as: Any = None
    ) -> dict[str, Tool]:
        """Emulated tools for `names` (every inventory tool when None), acting as `acting_as`."""
        chosen = sorted(self.registry.inventory if names is None else names)
        plans = [self.plan(n) for n in chosen]
        template = StateDump.of(self.image)
        caller = self.caller(template, acting_as)
        creating = (p.table for p in plans if p.shape in CREATING_SHAPES)
        ids = self.id_schemes(template, creating)
        volatile = self.volatile
        return {
            p.name: build_tool(p, self.tables, caller, volatile, ids.get(p.table)) for p in plans
        }

    def substrate(
        self, tools: Iterable[str], user_id: Any = None, choice: str = DEFAULT_SUBSTRATE
    ) -> Substrate:
        """A substrate offering `tools`, acting as `user_id` (built once per combination)."""
        names = frozenset(tools)
        key = (choice, user_id, names)
        if key not in self._substrates:
            blueprint = Blueprint(
                self.name, self.image, self.toolset(names, user_id), self.volatile
            )
            self._substrates[key] = open_substrate(choice, blueprint)
        return self._substrates[key]

    @property
    def volatile(self) -> dict[str, tuple[str, ...]]:
        """The domain's volatile columns, restricted to tables the seed has."""
        return {t: c for t, c in self.registry.volatile.items() if t in self.tables}
