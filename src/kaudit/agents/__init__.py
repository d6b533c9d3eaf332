"""Agents under audit: the protocol, scripted and reference (simulated) agents, chat agents."""

from kaudit._usage import Usage
from kaudit.agents._build import build_agent, build_agents
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
    "AgentDefaults",
    "AgentSession",
    "Episode",
    "Observation",
    "ReferenceAgent",
    "RunFacts",
    "ScriptSession",
    "ScriptedAgent",
    "ToolCall",
    "Turn",
    "Usage",
    "WorldAccess",
    "WorldAgent",
    "build_agent",
    "build_agents",
    "make_agent",
    "register_agent",
]
