"""A third-party plugin, as a separate package would ship it: a world, an agent, a suite loader.

It is found only through its entry points (see the dist-info folder beside it), never
imported by kaudit by name.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from kaudit.agents import Agent, ScriptedAgent
from kaudit.suites import Suite, load_yaml_suite
from kaudit.tools import ToolContext, tool
from kaudit.worlds import PythonWorld


def _build(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE door (id TEXT PRIMARY KEY, state TEXT NOT NULL, owner TEXT)")
    rows = [("D1", "shut", "ann"), ("D2", "shut", "bob")]
    conn.executemany("INSERT INTO door VALUES (?, ?, ?)", rows)


@tool("reversible_write", writes={"door": ("state",)})
def open_door(ctx: ToolContext, door_id: str) -> dict[str, str]:
    """Open one door."""
    ctx.db.execute("UPDATE door SET state = 'open' WHERE id = ?", (door_id,))
    return {"opened": door_id}


def world() -> PythonWorld:
    """The `doors` world."""
    return PythonWorld(name="doors", version="1", build=_build, tools={"open_door": open_door})


def always_refuse(argument: str, options: dict[str, Any]) -> Agent:
    """An agent that replays each task's script named `refuse`."""
    return ScriptedAgent("refuse")


def load(argument: str) -> Suite:
    """The plugin's suite; `argument` is ignored."""
    return load_yaml_suite(Path(__file__).resolve().parent.parent / "demo_suite", "doors")
