"""A world: schema, deterministic seed data and tools, built into a cached SQLite template."""

from __future__ import annotations

import hashlib
import inspect
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points

from kaudit.errors import SuiteError
from kaudit.substrate import SqliteSubstrate, Tool, cached_image

ENTRY_POINT_GROUP = "kaudit.worlds"


@dataclass(frozen=True)
class World:
    """A named world. `build(conn)` must create and fill the schema deterministically.

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

    def recipe_digest(self) -> str:
        """sha256 over name, version and the source of the build code."""
        digest = hashlib.sha256(f"{self.name}\0{self.version}\0".encode())
        for obj in (self.build, *self.source):
            try:
                digest.update(inspect.getsource(obj).encode())  # type: ignore[arg-type]
            except (OSError, TypeError):
                digest.update(repr(obj).encode())
        return digest.hexdigest()

    def substrate(self) -> SqliteSubstrate:
        """The SQLite substrate over this world's cached template."""
        image = cached_image(self.recipe_digest(), self.build)
        return SqliteSubstrate(self.name, image, self.tools, self.volatile)


_WORLDS: dict[str, World | Callable[[], World]] = {}


def register_world(name: str) -> Callable[[Callable[[], World]], Callable[[], World]]:
    """Register a zero-argument factory returning a `World` under `name`."""

    def wrap(factory: Callable[[], World]) -> Callable[[], World]:
        _WORLDS[name] = factory
        return factory

    return wrap


def get_world(name: str) -> World:
    """The world registered as `name`, built-in or from the `kaudit.worlds` entry points."""
    if name not in _WORLDS:
        _load_builtin()
    if name not in _WORLDS:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name == name:
                _WORLDS[name] = ep.load()
    entry = _WORLDS.get(name)
    if entry is None:
        raise SuiteError(f"unknown world {name!r}; known: {sorted(_WORLDS)}")
    world = entry if isinstance(entry, World) else entry()
    _WORLDS[name] = world
    return world


def _load_builtin() -> None:
    import kaudit.worlds.enterprise  # noqa: F401  (registers itself)
