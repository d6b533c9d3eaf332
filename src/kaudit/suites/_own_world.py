"""The `world:PATH` suite loader: the tasks of your own world directory, on that world."""

from __future__ import annotations

import hashlib
from pathlib import Path

from kaudit.errors import SpecError, SuiteError
from kaudit.spec import Task
from kaudit.substrate import Substrate
from kaudit.suites._suite import SUITE_LOADERS, Suite, load_yaml_suite
from kaudit.worlds._directory import DirectoryWorld
from kaudit.worlds._world import world_substrate


def load_world_suite(argument: str) -> Suite:
    """Every task under the world's `tasks` folder; each must name this world."""
    root = Path(argument).expanduser()
    if not root.is_dir():
        raise SuiteError(f"world directory {argument} does not exist")
    world = DirectoryWorld.load(root)
    if not world.tasks_dir.is_dir():
        raise SpecError(root / "world.yaml", "tasks", f"{world.tasks_dir} is not a directory")
    substrates: dict[str, Substrate] = {}

    def substrate_of(task: Task, choice: str) -> Substrate:
        # Checked here, before the loader proves each task against this world's schema.
        if task.world != world.name:
            raise SuiteError(f"task {task.id}: world is {task.world!r}, not {world.name!r}")
        unknown = sorted(set(task.tools) - set(world.tools))
        if unknown:
            raise SuiteError(f"task {task.id}: world {world.name} has no tool {unknown}")
        if choice not in substrates:
            substrates[choice] = world_substrate(world, choice)
        return substrates[choice]

    # Proved against the schema once the substrate is chosen: a world read from PostgreSQL
    # has no SQLite form (`Suite.on_substrate`).
    suite = load_yaml_suite(world.tasks_dir, f"world:{world.name}", substrate_of, check=False)
    # The schema, seed and tools are part of what a resumed campaign must share.
    suite.digest = hashlib.sha256(f"{suite.digest}\0{world.recipe_digest()}".encode()).hexdigest()
    return suite


SUITE_LOADERS.register("world")(load_world_suite)
