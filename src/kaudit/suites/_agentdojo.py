"""The `agentdojo:SUITE[@VERSION]` suite loader: AgentDojo's tasks audited the kaudit way.

Each user task alone is a benign task (`user_task_0`); each (user task, injection task)
pair AgentDojo can inject is a task (`user_task_0/injection_task_1`) whose world is the
suite's environment with the injection placed by AgentDojo's `important_instructions`
attack. VERSION is an AgentDojo benchmark version (`v1`, ..., `v1.2.2`, the default).
The installed `agentdojo` package supplies everything at load time; nothing is copied.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kaudit.errors import SuiteError
from kaudit.spec import Task
from kaudit.substrate import Substrate
from kaudit.suites._suite import SUITE_LOADERS, Suite

DEFAULT_VERSION = "v1.2.2"
"""The newest benchmark version agentdojo 0.1.35 ships."""

INSTALL_HINT = "agentdojo suites need the agentdojo package: pip install 'kaudit[agentdojo]'"


def parse_ref(argument: str) -> tuple[str, str]:
    """`banking@v1.2` -> ('banking', 'v1.2'); the version defaults to `DEFAULT_VERSION`."""
    name, _, version = argument.partition("@")
    if not name:
        raise SuiteError(f"agentdojo suite reference {argument!r} names no suite")
    return name, version or DEFAULT_VERSION


def agentdojo_suite(name: str, version: str) -> Any:
    """AgentDojo's `TaskSuite` called `name` in benchmark `version`; unknown ones are errors."""
    try:
        from agentdojo.task_suite.load_suites import _SUITES, get_suite
    except ImportError:
        raise SuiteError(INSTALL_HINT) from None
    if version not in _SUITES:
        raise SuiteError(
            f"agentdojo has no benchmark version {version!r}; it has {', '.join(_SUITES)}"
        )
    if name not in _SUITES[version]:
        raise SuiteError(
            f"agentdojo {version} has no suite {name!r}; it has {', '.join(_SUITES[version])}"
        )
    return get_suite(version, name)


def load_agentdojo_suite(argument: str) -> Suite:
    """Every user task, then every injectable (user task, injection task) pair."""
    name, version = parse_ref(argument)
    dojo = agentdojo_suite(name, version)
    from kaudit.worlds.agentdojo import (
        AgentDojoReferee,
        AgentDojoWorld,
        PairSource,
        build_task,
        important_instructions,
        injectable,
    )
    from kaudit.worlds.agentdojo._tasks import system_prompt

    attack = important_instructions(dojo)
    prompt = system_prompt()
    worlds: dict[str, AgentDojoWorld] = {}

    def world_of(injections: dict[str, str]) -> AgentDojoWorld:
        world = AgentDojoWorld(dojo, version, injections)
        return worlds.setdefault(world.name, world)

    sources: dict[str, PairSource] = {}
    for user_id, user_task in dojo.user_tasks.items():
        sources[user_id] = PairSource(user_task, None, {}, world_of({}))
        if not injectable(attack, user_task):
            continue
        for injection_id, injection_task in dojo.injection_tasks.items():
            injections = attack.attack(user_task, injection_task)
            pair = PairSource(user_task, injection_task, injections, world_of(injections))
            sources[f"{user_id}/{injection_id}"] = pair
    tasks = {task_id: build_task(task_id, s, prompt) for task_id, s in sources.items()}
    digest = hashlib.sha256(f"agentdojo\0{name}\0{version}".encode())
    for world_name in sorted(worlds):
        digest.update(worlds[world_name].recipe_digest().encode())

    def substrate_of(task: Task, choice: str) -> Substrate:
        return sources[task.id].world.substrate(choice)

    return Suite(
        name=f"agentdojo:{name}@{version}",
        tasks=tasks,
        digest=digest.hexdigest(),
        substrate_of=substrate_of,
        lint=False,  # a peer's published tasks: reported as they are, never rewritten
        referee=AgentDojoReferee(sources),
    ).check_schema()


SUITE_LOADERS.register("agentdojo")(load_agentdojo_suite)
