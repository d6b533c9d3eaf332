"""Building agents from the strings users type: `reference`, `scripted:NAME`, `openai:MODEL`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kaudit.agents._protocol import Agent
from kaudit.agents._scripted import ReferenceAgent, ScriptedAgent
from kaudit.errors import KauditError
from kaudit.registry import Registry

AgentBuilder = Callable[[str, dict[str, Any]], Agent]
ENTRY_POINT_GROUP = "kaudit.agents"
"""Third-party packages register agent builders here: `name = "pkg.module:builder"`."""

AGENTS: Registry[AgentBuilder] = Registry(
    "agent kind", ENTRY_POINT_GROUP, builtins=("kaudit.agents.chat", "kaudit.serve._command")
)
"""Builders for agent specs written `PREFIX` or `PREFIX:ARGUMENT`, by prefix."""


def register_agent(prefix: str) -> Callable[[AgentBuilder], AgentBuilder]:
    """Register a builder for agent specs written `PREFIX` or `PREFIX:ARGUMENT`."""
    return AGENTS.register(prefix)


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
    builder = AGENTS.find(prefix)
    if builder is None:
        raise KauditError(f"unknown agent {spec!r}; known kinds: {AGENTS.names()}")
    return builder(argument, options)
