"""Agents under audit: the protocol, scripted and reference (simulated) agents, chat agents."""

from kaudit.agents._protocol import (
    Agent,
    AgentSession,
    Episode,
    Observation,
    ToolCall,
    Turn,
    Usage,
)
from kaudit.agents._registry import (
    AGENTS,
    ENTRY_POINT_GROUP,
    AgentBuilder,
    make_agent,
    register_agent,
)
from kaudit.agents._scripted import ReferenceAgent, ScriptedAgent, ScriptSession

__all__ = [
    "AGENTS",
    "ENTRY_POINT_GROUP",
    "Agent",
    "AgentBuilder",
    "AgentSession",
    "Episode",
    "Observation",
    "ReferenceAgent",
    "ScriptSession",
    "ScriptedAgent",
    "ToolCall",
    "Turn",
    "Usage",
    "make_agent",
    "register_agent",
]
