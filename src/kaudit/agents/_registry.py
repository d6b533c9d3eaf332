"""Building agents from the strings users type: `reference`, `scripted:NAME`, `openai:MODEL`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from kaudit.agents._protocol import Agent
from kaudit.agents._scripted import ReferenceAgent, ScriptedAgent
from kaudit.errors import KauditError

AgentBuilder = Callable[[str, dict[str, Any]], Agent]
_BUILDERS: dict[str, AgentBuilder] = {}
ENTRY_POINT_GROUP = "kaudit.agents"
"""Third-party packages register agent builders here: `name = "pkg.module:builder"`."""


def register_agent(prefix: str) -> Callable[[AgentBuilder], AgentBuilder]:
    """Register a builder for agent specs written `PREFIX` or `PREFIX:ARGUMENT`."""

    def wrap(builder: AgentBuilder) -> AgentBuilder:
        _BUILDERS[prefix] = builder
        return builder

    return wrap


@register_agent("reference")
def _reference(argument: str, options: dict[str, Any]) -> Agent:
    return (
        ReferenceAgent() if not argument else ReferenceAgent(name=f"simulated:reference:{argument}")
    )


@register_agent("scripted")
def _scripted(argument: str, options: dict[str, Any]) -> Agent:
    return ScriptedAgent(argument or "oracle")


def make_agent(spec: str, **options: Any) -> Agent:
    """The agent a spec string names; unknown prefixes list the known ones."""
    prefix, _, argument = spec.partition(":")
    if prefix not in _BUILDERS:
        _load_optional()
    if prefix not in _BUILDERS:
        for ep in entry_points(group=ENTRY_POINT_GROUP, name=prefix):
            _BUILDERS[prefix] = ep.load()
    builder = _BUILDERS.get(prefix)
    if builder is None:
        raise KauditError(f"unknown agent {spec!r}; known kinds: {sorted(_BUILDERS)}")
    return builder(argument, options)


def _load_optional() -> None:
    with contextlib.suppress(ModuleNotFoundError):
        import kaudit.agents.chat  # noqa: F401  (registers openai: and anthropic:)
