"""The `agentrelbench:PATH` suite loader.

Every folder at any depth under PATH holding a `task.json` is a task, named by its
folder. The suite root is the nearest folder at or above PATH holding both
`data/seed-dbs/` and `data/eog/`; seed files resolve against it. Tasks sharing a seed
share one `EogWorld` (one cached template); each task is offered only its own tools.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from kaudit.errors import SuiteError
from kaudit.spec import Task
from kaudit.substrate import Substrate
from kaudit.substrate.eog._registry import DomainRegistry, load_registry
from kaudit.substrate.eog._task import TaskSource, load_task_folder
from kaudit.substrate.eog._world import EogWorld
from kaudit.suites import Suite, register_suite_loader


def find_suite_root(path: Path) -> Path:
    """The nearest folder at or above `path` holding `data/seed-dbs/` and `data/eog/`."""
    for folder in (path, *path.parents):
        if (folder / "data" / "seed-dbs").is_dir() and (folder / "data" / "eog").is_dir():
            return folder
    raise SuiteError(f"no folder at or above {path} holds data/seed-dbs/ and data/eog/")


def task_folders(path: Path) -> list[Path]:
    """Folders under `path` (at any depth) that hold a `task.json`, sorted by path."""
    return sorted(p.parent for p in path.rglob("task.json"))


def _digest(folders: list[Path], path: Path) -> hashlib._Hash:
    digest = hashlib.sha256()
    for folder in folders:
        for file in sorted(p for p in folder.rglob("*") if p.is_file()):
            digest.update(file.relative_to(path).as_posix().encode() + b"\0" + file.read_bytes())
    return digest


class _Worlds:
    """One `EogWorld` per seed file and one registry per domain, built on first use."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.registries: dict[str, DomainRegistry] = {}
        self.worlds: dict[Path, EogWorld] = {}

    def registry(self, domain: str) -> DomainRegistry:
        if domain not in self.registries:
            self.registries[domain] = load_registry(self.root, domain)
        return self.registries[domain]

    def world(self, source: TaskSource) -> EogWorld:
        if source.seed_file not in self.worlds:
            if not source.seed_file.is_file():
                raise SuiteError(
                    f"task {source.task.id}: seed file {source.seed_file} does not exist"
                )
            self.worlds[source.seed_file] = EogWorld(
                source.domain, source.seed_file, self.registry(source.domain)
            )
        return self.worlds[source.seed_file]


def load_agentrelbench_suite(argument: str) -> Suite:
    """The AgentRelBench tasks under `argument`, each on its emulated EOG server."""
    path = Path(argument).expanduser().resolve()
    if not path.is_dir():
        raise SuiteError(f"agentrelbench suite path {argument} is not a directory")
    root = find_suite_root(path)
    worlds = _Worlds(root)
    folders = task_folders(path)
    if not folders:
        raise SuiteError(f"no task.json under {path}")
    sources: dict[str, TaskSource] = {}
    origin: dict[str, Path] = {}
    for folder in folders:
        source = load_task_folder(folder, root, worlds.registry)
        if source.task.id in sources:
            raise SuiteError(f"two tasks are named {source.task.id!r} under {path}")
        sources[source.task.id] = source
        origin[source.task.id] = folder
    digest = _digest(folders, path)
    for source in sources.values():
        world = worlds.world(source)
        for tool in source.task.tools:
            world.plan(tool)  # an unknown or unemulatable tool fails the load, not a run
        digest.update(world.recipe_digest().encode())

    def substrate_of(task: Task) -> Substrate:
        source = sources[task.id]
        return worlds.world(source).substrate(source.task.tools, source.user_id)

    tasks = {task_id: source.task for task_id, source in sources.items()}
    return Suite(
        name=f"agentrelbench:{argument}",
        tasks=tasks,
        digest=digest.hexdigest(),
        substrate_of=substrate_of,
        lint=False,  # published third-party specs: report them, never rewrite them
    ).check_schema(origin)


register_suite_loader("agentrelbench")(load_agentrelbench_suite)
