"""Chat agents: real models over the OpenAI-compatible and Anthropic APIs.

`openai:NAME` and `anthropic:NAME` specs are registered here; `model_agent` also takes a
YAML model config file. The SDKs are imported only when an agent is built, so this
package imports without them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kaudit.agents._protocol import Agent
from kaudit.agents._registry import register_agent
from kaudit.agents.chat._agent import ChatAgent
from kaudit.agents.chat._config import (
    ModelConfig,
    Price,
    Provider,
    load_model_config,
    redact,
    short_config,
)
from kaudit.agents.chat._preflight import PreflightReport
from kaudit.errors import PreflightError

__all__ = [
    "ChatAgent",
    "ModelConfig",
    "PreflightError",
    "PreflightReport",
    "Price",
    "Provider",
    "is_config_path",
    "load_model_config",
    "model_agent",
    "preflight_agents",
    "redact",
    "short_config",
]


def is_config_path(spec: str) -> bool:
    """Whether a `--model` value names a YAML model config file rather than a spec."""
    return spec.endswith((".yaml", ".yml")) or Path(spec).is_file()


def model_agent(spec: str, **overrides: Any) -> ChatAgent:
    """A chat agent from `openai:NAME`, `anthropic:NAME` or a YAML config path.

    `overrides` (base_url, temperature, max_tokens, api_key_env, …) replace config values
    when not None.
    """
    if is_config_path(spec):
        return ChatAgent(load_model_config(spec, **overrides))
    provider, _, name = spec.partition(":")
    if provider not in ("openai", "anthropic"):
        from kaudit.errors import KauditError

        raise KauditError(f"not a chat model spec: {spec!r} (use openai:NAME or anthropic:NAME)")
    return ChatAgent(short_config(provider, name, **overrides))  # type: ignore[arg-type]


def preflight_agents(agents: list[Agent], *, skip: bool = False) -> list[PreflightReport]:
    """Probe every chat model's serving stack before a campaign; raise on the first failure.

    Simulated and external agents have no stack to probe. With `skip`, only the API key
    is checked (a missing key is a setup mistake, never data) and the manifest records
    the preflight as skipped. Raises `PreflightError` with one line naming the model, its
    base URL and what failed.
    """
    reports: list[PreflightReport] = []
    for agent in agents:
        if not isinstance(agent, ChatAgent):
            continue
        if skip:
            agent.config.api_key()
            continue
        report = agent.preflight()
        if not report.ok:
            raise PreflightError(report.line())
        reports.append(report)
    return reports


@register_agent("openai")
def _openai(argument: str, options: dict[str, Any]) -> Agent:
    return model_agent(f"openai:{argument}", **options)


@register_agent("anthropic")
def _anthropic(argument: str, options: dict[str, Any]) -> Agent:
    return model_agent(f"anthropic:{argument}", **options)
