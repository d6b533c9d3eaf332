"""Worlds built by Python code, the world registry, and a world's substrate of choice."""

from __future__ import annotations

import hashlib
import inspect
import sqlite3
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from kaudit.errors import SuiteError
from kaudit.registry import Registry
from kaudit.substrate import Blueprint, ForeignKey, Substrate, cached_image
from kaudit.substrate._choice import DEFAULT_SUBSTRATE, open_substrate
from kaudit.tools import Tool
from kaudit.worlds._ownership import check_ownership
from kaudit.worlds._protocol import DeclaresOwnership, FixedTools, World

ENTRY_POINT_GROUP = "kaudit.worlds"

WORLDS: Registry[Callable[[], World]] = Registry(
    "world",
    ENTRY_POINT_GROUP,
    builtins=("kaudit.worlds.enterprise",),
    error=SuiteError,
)
"""Zero-argument factories returning a `World`, by world name."""


@dataclass(frozen=True)
class PythonWorld(FixedTools):
    """A world whose `build(conn)` creates and fills the schema deterministically.

    `verticals` maps a vertical name to the tool names that belong to it; `volatile`
    lists columns per table that change by themselves (masked by every task on it).
    `source` lists objects whose source code is part of the template's cache key, so
    editing the seed code rebuilds the template.
    """

    name: str
    version: str
    build: Callable[[sqlite3.Connection], None]
    tools: Mapping[str, Tool]
    verticals: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    volatile: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    source: tuple[object, ...] = ()
    ownership: tuple[ForeignKey, ...] = ()
    """Which rows belong to which where the schema declares no foreign keys (a scope
    follows them as it follows the schema's own)."""

    @property
    def ownership_file(self) -> None:
        """None: the links are declared in code, so errors name the world."""
        return None

    def recipe_digest(self) -> str:
        """sha256 over name, version and the source of the build code."""
        digest = hashlib.sha256(f"{self.name}\0{self.version}\0".encode())
        for obj in (self.build, *self.source):
            try:
                digest.update(inspect.getsource(obj).encode())  # type: ignore[arg-type]
            except (OSError, TypeError):
                digest.update(repr(obj).encode())
        return digest.hexdigest()

    @property
    def source_database(self) -> str | None:
        """None: built by Python code into a SQLite image."""
        return None

    def template_image(self) -> bytes:
        """The template, built once and cached on disk by the recipe digest."""
        return cached_image(self.recipe_digest(), self.build)

    def substrate(self, choice: str = DEFAULT_SUBSTRATE) -> Substrate:
        """This world on the substrate `choice` names, offering every tool."""
        return world_substrate(self, choice)


def world_substrate(
    world: World,
    choice: str = DEFAULT_SUBSTRATE,
    tools: Collection[str] | None = None,
    acting_as: Any = None,
) -> Substrate:
    """`world` on the substrate `choice` names (`sqlite` or a `postgresql://` URL)."""
    image = world.template_image()
    declared = world if isinstance(world, DeclaresOwnership) else None
    ownership = tuple(declared.ownership) if declared is not None else ()
    source = declared.ownership_file if declared is not None else None
    check_ownership(world.name, ownership, image, source)
    blueprint = Blueprint(
        world.name,
        image,
        world.toolset(tools, acting_as),
        world.volatile,
        world.source_database,
        ownership,
    )
    return open_substrate(choice, blueprint)


def register_world(name: str) -> Callable[[Callable[[], World]], Callable[[], World]]:
    """Register a zero-argument factory returning a `World` under `name`."""
    return WORLDS.register(name)


_INSTANCES: dict[str, World] = {}


def get_world(name: str) -> World:
    """The world registered as `name`, built-in or from the `kaudit.worlds` entry points."""
    if name not in _INSTANCES:
        _INSTANCES[name] = WORLDS.get(name)()
    return _INSTANCES[name]
