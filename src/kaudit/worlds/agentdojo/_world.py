"""One AgentDojo suite environment, with one set of injections placed, as a kaudit world.

The environment comes from the installed `agentdojo` package at run time: its YAML
formatted with the injections by AgentDojo's own `load_and_inject_default_environment`,
validated by its pydantic model, then stored as tables (`_tables`). Nothing of
AgentDojo is copied: the template is rebuilt from the package and cached by a digest
over the package version, the suite, the benchmark version and the environment itself.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import BaseModel

from kaudit.substrate import Blueprint, Substrate, cached_image
from kaudit.substrate._choice import DEFAULT_SUBSTRATE
from kaudit.substrate._choice import open_substrate as _open
from kaudit.tools import Tool
from kaudit.worlds._protocol import FixedTools
from kaudit.worlds.agentdojo._tables import (
    LAYOUT_VERSION,
    POSITION,
    TableLayout,
    build_tables,
    layout_of,
)
from kaudit.worlds.agentdojo._tools import agentdojo_tool

READ_LOGS: dict[str, dict[str, tuple[str, ...]]] = {
    "slack": {"web": ("web_requests",)},
}
"""Per suite and environment part: fields that record reads, not state.

Slack's `get_webpage` appends every URL it reads to `web.web_requests`: reading a page
harms no one, so the log is volatile (an extra read is neither damage nor a broken
check); posting to a URL writes `web_content`, which stays diffed. AgentDojo's
utility and security still read the log, which is stored and read back as it is.
"""

SEED_COPIES: dict[str, dict[str, tuple[str, ...]]] = {
    "workspace": {
        "inbox": ("initial_emails",),
        "calendar": ("initial_events",),
        "cloud_drive": ("initial_files",),
    },
}
"""Per suite and part: the seed lists a validator builds the live dicts from.

Workspace's inbox, calendar and drive hold `initial_*` lists that AgentDojo's validators
turn into `emails`, `events` and `files`; tools act on the dicts only. In AgentDojo's
memory both hold the same objects, so a ground-truth edit to a file showed in
`initial_files` too, a change no sandbox run can make (its tables are separate): the
copies are stored as volatile JSON columns, like a read log, never diffed.
"""

VOLATILE_COLUMNS: dict[str, dict[str, tuple[str, ...]]] = {
    "workspace": {"emails": ("read",), "files": ("last_modified",)},
}
"""Per suite and table: columns a read or the clock writes, masked from every diff.

`get_unread_emails` marks what it returns as read: reading mail harms no one, as
reading a page does not in slack. A drive write stamps `last_modified` with the time
of the call, so a ground truth replayed at load time could never match a later run.
Both are stored and read back, so AgentDojo's own checks see them as left.
"""


def injections_digest(injections: Mapping[str, str]) -> str:
    """A short digest naming a set of placed injections (empty: the suite's defaults)."""
    text = json.dumps(dict(injections), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass
class AgentDojoWorld(FixedTools):
    """The environment of AgentDojo suite `suite` (a `TaskSuite`) with `injections` placed."""

    suite: Any
    version: str
    injections: Mapping[str, str] = field(default_factory=dict)
    _substrates: dict[str, Substrate] = field(default_factory=dict, init=False, repr=False)

    @property
    def name(self) -> str:
        """`agentdojo-SUITE@VERSION`, plus the injections' digest when any are placed."""
        base = f"agentdojo-{self.suite.name}@{self.version}"
        return f"{base}:{injections_digest(self.injections)}" if self.injections else base

    @property
    def env_type(self) -> type[BaseModel]:
        """AgentDojo's environment model of the suite."""
        env_type: type[BaseModel] = self.suite.environment_type
        return env_type

    @cached_property
    def tables(self) -> tuple[TableLayout, ...]:
        """The environment's table layout."""
        name = self.suite.name
        logs = {**READ_LOGS.get(name, {}), **SEED_COPIES.get(name, {})}
        masked = VOLATILE_COLUMNS.get(name, {})
        return tuple(
            dataclasses.replace(t, volatile=(*t.volatile, *masked.get(t.name, ())))
            for t in layout_of(self.env_type, logs)
        )

    @cached_property
    def _loaded(self) -> BaseModel:
        env: BaseModel = self.suite.load_and_inject_default_environment(dict(self.injections))
        return env

    def environment(self) -> BaseModel:
        """A fresh environment object with the injections placed, as AgentDojo builds it.

        Parsed from the YAML once per world, then deep-copied (as AgentDojo copies its
        pre-environment): parsing dominated loading a suite, ~800 times per load.
        """
        return self._loaded.model_copy(deep=True)

    @cached_property
    def _environment_json(self) -> str:
        return self._loaded.model_dump_json()

    def recipe_digest(self) -> str:
        """sha256 over agentdojo's version, the suite, the environment and the layout."""
        from importlib.metadata import version

        parts = (
            "agentdojo",
            version("agentdojo"),
            self.suite.name,
            self.version,
            LAYOUT_VERSION,
            self._environment_json,
        )
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    def build(self, conn: sqlite3.Connection) -> None:
        """Create the tables and insert the injected environment's rows."""
        build_tables(conn, self.tables, self.environment())

    @cached_property
    def image(self) -> bytes:
        """The template image, cached on disk by the recipe digest."""
        return cached_image(self.recipe_digest(), self.build)

    def template_image(self) -> bytes:
        """The template image (the `World` protocol's name for `image`)."""
        return self.image

    @property
    def volatile(self) -> dict[str, tuple[str, ...]]:
        """The list order column of each list and dict table, and the read logs.

        Order is how AgentDojo's tools see a list, not a fact about a row: a removal
        shifts every later position, which must not read as a change to those rows.
        """
        out: dict[str, tuple[str, ...]] = {
            t.name: (POSITION,) for t in self.tables if t.kind != "one" and t.key != POSITION
        }
        for table in self.tables:  # a dict table's masked columns join its position
            if table.volatile:
                out[table.name] = (*out.get(table.name, ()), *table.volatile)
        return out

    @property
    def source_database(self) -> str | None:
        """None: built from the package's environment into a SQLite image."""
        return None

    @cached_property
    def tools(self) -> dict[str, Tool]:
        """Every tool of the suite, running AgentDojo's function on the sandbox."""
        from agentdojo.functions_runtime import FunctionsRuntime

        runtime = FunctionsRuntime(self.suite.tools)
        return {
            f.name: agentdojo_tool(f, runtime, self.tables, self.env_type) for f in self.suite.tools
        }

    def substrate(self, choice: str = DEFAULT_SUBSTRATE) -> Substrate:
        """This world on `choice`, offering every tool (built once per choice)."""
        if choice not in self._substrates:
            blueprint = Blueprint(self.name, self.image, self.toolset(), self.volatile)
            self._substrates[choice] = _open(choice, blueprint)
        return self._substrates[choice]
