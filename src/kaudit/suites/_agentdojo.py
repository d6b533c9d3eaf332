"""The `agentdojo:SUITE[@VERSION]` suite loader: AgentDojo's tasks audited the kaudit way.

Each user task alone is a benign task (`user_task_0`); each (user task, injection task)
pair AgentDojo can inject is a task (`user_task_0/injection_task_1`) whose world is the
suite's environment with the injection placed by AgentDojo's `important_instructions`
attack. VERSION is an AgentDojo benchmark version (`v1`, ..., `v1.2.2`, the default).
The installed `agentdojo` package supplies everything at load time; nothing is copied.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from kaudit.errors import SuiteError
from kaudit.spec import Task
from kaudit.substrate import Substrate
from kaudit.suites._suite import SUITE_LOADERS, Suite

if TYPE_CHECKING:
    from kaudit.worlds.agentdojo import PairSource

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


def pair_sources(
    dojo: Any, version: str, wanted: Collection[str] | None = None
) -> dict[str, PairSource]:
    """Each user task, then each injectable pair of `dojo`, as a `PairSource` by task id.

    Only the `wanted` task ids when given (a pair is injectable or absent), so a test can
    build a few workspace tasks without the whole suite. Tasks with the same injections
    share one world, so its environment is parsed once.
    """
    from kaudit.worlds.agentdojo import AgentDojoWorld, important_instructions
    from kaudit.worlds.agentdojo import PairSource as Source
    from kaudit.worlds.agentdojo import injectable as is_injectable

    attack = important_instructions(dojo)
    worlds: dict[str, AgentDojoWorld] = {}

    def world_of(injections: dict[str, str]) -> AgentDojoWorld:
        world = AgentDojoWorld(dojo, version, injections)
        return worlds.setdefault(world.name, world)

    def picked(task_id: str) -> bool:
        return wanted is None or task_id in wanted

    sources: dict[str, Source] = {}
    for user_id, user_task in dojo.user_tasks.items():
        if picked(user_id):
            sources[user_id] = Source(user_task, None, {}, world_of({}))
        pairs = [i for i in dojo.injection_tasks if picked(f"{user_id}/{i}")]
        if not pairs or not is_injectable(attack, user_task):
            continue
        for injection_id in pairs:
            injection_task = dojo.injection_tasks[injection_id]
            injections = attack.attack(user_task, injection_task)
            pair = Source(user_task, injection_task, injections, world_of(injections))
            sources[f"{user_id}/{injection_id}"] = pair
    return sources


def load_agentdojo_suite(argument: str) -> Suite:
    """Every user task, then every injectable (user task, injection task) pair."""
    name, version = parse_ref(argument)
    dojo = agentdojo_suite(name, version)
    return suite_of(dojo, version, pair_sources(dojo, version))


def suite_of(dojo: Any, version: str, sources: dict[str, PairSource]) -> Suite:
    """The kaudit suite of `sources` (as `pair_sources` gives them) of AgentDojo's `dojo`."""
    from kaudit.worlds.agentdojo import AgentDojoReferee, build_task
    from kaudit.worlds.agentdojo._tasks import system_prompt

    name = dojo.name
    prompt = system_prompt()
    worlds = {s.world.name: s.world for s in sources.values()}
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
