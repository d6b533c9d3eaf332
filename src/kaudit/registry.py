"""One small registry for every extension point: worlds, agents, substrates, executors.

Each extension point (suite loaders too) owns one `Registry`: built-in entries register
with the decorator when their module is imported (the registry imports those modules on
first miss), third-party packages through an entry-point group (`kaudit.worlds`,
`kaudit.agents`, `kaudit.suites`, `kaudit.substrates`, `kaudit.executors`), found
without kaudit knowing their names.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterable
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from kaudit.errors import KauditError

T = TypeVar("T")


class Registry(Generic[T]):
    """Names mapped to factories of one kind (`T`), from code or from entry points.

    `builtins` lists modules that register entries when imported; they are imported
    lazily, so a module with an optional dependency that is missing (the chat agents
    without `openai`) simply contributes nothing.
    """

    def __init__(
        self,
        kind: str,
        group: str,
        builtins: Iterable[str] = (),
        error: type[KauditError] = KauditError,
    ) -> None:
        self.kind = kind
        self.group = group
        self._builtins = tuple(builtins)
        self._error = error
        self._entries: dict[str, T] = {}
        self._loaded = False

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: register the decorated factory under `name` (a later one replaces it)."""

        def wrap(factory: T) -> T:
            self._entries[name] = factory
            return factory

        return wrap

    def find(self, name: str) -> T | None:
        """The factory for `name`, looking in built-ins and then in the entry-point group."""
        if name not in self._entries:
            self._load_builtins()
        if name not in self._entries:
            for ep in entry_points(group=self.group, name=name):
                self._entries[name] = ep.load()
        return self._entries.get(name)

    def get(self, name: str) -> T:
        """The factory for `name`; an unknown name is an error listing the known ones."""
        found = self.find(name)
        if found is None:
            raise self._error(f"unknown {self.kind} {name!r}; known: {self.names()}")
        return found

    def names(self) -> list[str]:
        """Every registered name (built-ins and installed plugins), sorted."""
        self._load_builtins()
        plugins = {ep.name for ep in entry_points(group=self.group)}
        return sorted(set(self._entries) | plugins)

    def _load_builtins(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for module in self._builtins:
            # a missing optional extra: the module says so with either error
            with contextlib.suppress(ModuleNotFoundError, KauditError):
                importlib.import_module(module)
