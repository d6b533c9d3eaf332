"""Agents from what a user names: a model config YAML, a registry spec, or an agent object."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kaudit._require import require_seconds
from kaudit.agents._protocol import Agent
from kaudit.agents._registry import make_agent
from kaudit.agents._scripted import ScriptedAgent
from kaudit.errors import InputError
from kaudit.spec import Task


def build_agent(spec: str, overrides: Mapping[str, Any]) -> Agent:
    """A chat agent from a model config YAML; every other spec through the agent registry."""
    from kaudit.agents.chat import is_config_path, model_agent

    if is_config_path(spec):
        return model_agent(spec, **overrides)
    return make_agent(spec, **overrides)


EXTERNAL_KINDS = ("command", "mcp")
"""Agent kinds that start an external program per run (`--agent-command`)."""


def is_external(spec: str | Agent) -> bool:
    """Whether an agent spec names an external agent (`command[:NAME]`, `mcp[:NAME]`)."""
    return isinstance(spec, str) and spec.partition(":")[0] in EXTERNAL_KINDS


def external_options(
    specs: Sequence[str | Agent],
    command: str | None,
    timeout: float | None,
    tools: Mapping[str, Any] | None = None,
    doors: Sequence[Any] = (),
) -> dict[str, Any]:
    """The options only external agents take; any given without one is an input error.

    `tools` are the tool door's (`tools_command`, `tools_tag`), passed on as given;
    `doors` are door factories every run of an external agent gets (the model proxy).
    """
    given = {
        "agent_command": command,
        "agent_timeout": timeout,
        "upstream": tuple(doors) or None,
    } | dict(tools or {})
    if timeout is not None:
        require_seconds("agent_timeout", timeout)
    options = {name: value for name, value in given.items() if value is not None}
    if options and not any(is_external(spec) for spec in specs):
        raise InputError(
            next(iter(options)), "needs an external agent (`agents` of kind mcp or command)"
        )
    return options


def build_agents(
    specs: Sequence[str | Agent],
    tasks: Iterable[Task],
    *,
    model_options: Mapping[str, Any] | None = None,
    agent_command: str | None = None,
    agent_timeout: float | None = None,
    tools: Mapping[str, Any] | None = None,
    doors: Sequence[Any] = (),
) -> list[Agent]:
    """Every agent of a campaign, each able to run every one of `tasks`.

    Strings are built (`build_agent`) with `model_options` (base URL, temperature,
    ...); external agents also get `agent_command` / `agent_timeout`, the tool
    door's options (`tools`: `tools_command`, `tools_tag`) and `doors` (as the
    `upstream` option: door factories for every run, the model proxy). Agent objects
    are used as given. A scripted agent lacking a task's script is refused here, before
    anything is written to a ledger.
    """
    overrides = dict(model_options or {})
    external = external_options(specs, agent_command, agent_timeout, tools, doors)
    agents = [
        spec
        if not isinstance(spec, str)
        else build_agent(spec, overrides | external if is_external(spec) else overrides)
        for spec in specs
    ]
    chosen = list(tasks)
    for built in agents:
        if isinstance(built, ScriptedAgent):
            built.require_scripts(chosen)
    return agents
