"""Agents under audit: the protocol, scripted and reference (simulated) agents, chat agents."""

from kaudit._usage import Usage
from kaudit.agents._build import build_agent
from kaudit.agents._protocol import (
    Agent,
    AgentDefaults,
    AgentSession,
    Episode,
    Observation,
    RunFacts,
    ToolCall,
    Turn,
    WorldAccess,
    WorldAgent,
)
from kaudit.agents._registry import AgentBuilder, register_agent
from kaudit.agents._scripted import ReferenceAgent, ScriptedAgent

__all__ = [
    "Agent",
    "AgentBuilder",
    "AgentDefaults",
    "AgentSession",
    "Episode",
    "Observation",
    "ReferenceAgent",
    "RunFacts",
    "ScriptedAgent",
    "ToolCall",
    "Turn",
    "Usage",
    "WorldAccess",
    "WorldAgent",
    "build_agent",
    "register_agent",
]
