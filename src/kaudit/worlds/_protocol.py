"""The one protocol every world satisfies: the enterprise world, the EOG emulation, yours."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from kaudit.substrate import ForeignKey
from kaudit.tools import Tool


@runtime_checkable
class World(Protocol):
    """A schema with deterministic seed data and the tools that act on it.

    The seeded state is one SQLite image (`template_image`), the canonical form every
    substrate starts from: SQLite copies it, PostgreSQL builds a template database
    from it. `recipe_digest` changes whenever what the image contains could change.
    """

    @property
    def name(self) -> str:
        """Names the world in task files, manifests and errors."""
        ...

    @property
    def volatile(self) -> Mapping[str, tuple[str, ...]]:
        """Columns per table that change by themselves (masked by every task on it)."""
        ...

    @property
    def source_database(self) -> str | None:
        """The PostgreSQL database the world is cloned from, or None when built from its image."""
        ...

    def recipe_digest(self) -> str:
        """sha256 over everything that decides the template's content."""
        ...

    def template_image(self) -> bytes:
        """The seeded state as a SQLite image, built once per recipe digest."""
        ...

    def toolset(
        self, names: Collection[str] | None = None, acting_as: Any = None
    ) -> dict[str, Tool]:
        """The tools called `names` (all when None), acting as the `acting_as` user if given."""
        ...


class _HasTools(Protocol):
    @property
    def tools(self) -> Mapping[str, Tool]: ...


class FixedTools:
    """`World.toolset` for a world whose tools are fixed objects in its `tools` mapping.

    They act for whoever runs them, so `acting_as` changes nothing; unknown names are
    left out (a task's tools are checked against the world where the task is loaded).
    """

    def toolset(
        self: _HasTools, names: Collection[str] | None = None, acting_as: Any = None
    ) -> dict[str, Tool]:
        """The tools called `names` (all when None)."""
        if names is None:
            return dict(self.tools)
        return {n: self.tools[n] for n in names if n in self.tools}


@runtime_checkable
class DeclaresOwnership(Protocol):
    """A world that says which rows belong to which where its schema declares no foreign keys.

    Optional for a world: one without it has only its schema's links. A boundary's scope
    follows the declared links as it follows the schema's own.
    """

    @property
    def ownership(self) -> tuple[ForeignKey, ...]:
        """The declared links (child columns to parent key)."""
        ...

    @property
    def ownership_file(self) -> Path | None:
        """The file the links were read from, for errors that name it; None for code."""
        ...
