"""Suites: named collections of tasks, each knowing which substrate its tasks run on."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kaudit.errors import SpecError, SuiteError
from kaudit.registry import Registry
from kaudit.spec import Task
from kaudit.spec._load import load_task
from kaudit.substrate import Substrate
from kaudit.substrate._choice import DEFAULT_SUBSTRATE
from kaudit.suites._conform import check_against_schema
from kaudit.suites._referee import Referee
from kaudit.suites._variants import distractor_variant, with_extra_rows
from kaudit.worlds._world import get_world, world_substrate

BUILTIN_DIR = Path(__file__).parent / "builtin"


@dataclass
class Suite:
    """Tasks by id plus the substrate each runs on; `digest` pins the exact task files.

    `substrate_choice` is where every task of the suite runs: `sqlite` or a
    `postgresql://` URL (see `on_substrate`).
    """

    name: str
    tasks: dict[str, Task]
    digest: str
    substrate_of: Callable[[Task, str], Substrate] | None = None
    """A loader's own mapping of a task (and the substrate choice) to its substrate."""
    lint: bool = True
    """Whether `kaudit validate` lints the tasks (off for imported third-party suites)."""
    substrate_choice: str = DEFAULT_SUBSTRATE
    _substrates: dict[str, Substrate] = field(default_factory=dict)
    _images: dict[str, bytes] = field(default_factory=dict)
    schema_checked: bool = False
    """Whether `check_schema` proved every task against its world on `substrate_choice`."""
    origins: dict[str, Path] = field(default_factory=dict)
    """The file each task was read from, for schema errors that name it."""
    referee: Referee | None = None
    """The imported suite's own judge, recorded beside each verdict (AgentDojo's checks)."""

    def on_substrate(self, choice: str) -> Suite:
        """The same tasks, run on the substrate `choice` names (`sqlite`, `postgresql://...`).

        Every task is proved against the world's schema as that substrate seeds it, since a
        world read from PostgreSQL has no SQLite form to check beforehand.
        """
        if choice == self.substrate_choice and self.schema_checked:
            return self
        moved = dataclasses.replace(
            self, substrate_choice=choice, _substrates={}, _images={}, schema_checked=False
        )
        return moved.check_schema()

    def substrates_on(self, choice: str) -> list[Substrate]:
        """The substrates every task and distractor variant would run on at `choice`.

        Made without seeding: nothing is created on a server and no template is built,
        so a cleanup can ask which template databases the suite still needs.
        """
        moved = dataclasses.replace(
            self, substrate_choice=choice, _substrates={}, _images={}, schema_checked=False
        )
        tasks = list(moved.tasks.values())
        tasks += [distractor_variant(t, moved._base_substrate(t)) for t in tasks if t.distractors]
        found: dict[int, Substrate] = {}
        for task in tasks:
            substrate = moved.substrate(task)
            found.setdefault(id(substrate), substrate)
        return list(found.values())

    def reclaim(self, campaign: str, tasks: Iterable[Task] | None = None) -> int:
        """Remove what killed runs of `campaign` left on each substrate; returns how many."""
        chosen = self.tasks.values() if tasks is None else tasks
        seen: dict[int, Substrate] = {}
        for task in chosen:
            substrate = self._base_substrate(task)
            seen.setdefault(id(substrate), substrate)
        return sum(substrate.reclaim(campaign) for substrate in seen.values())

    def substrate(self, task: Task) -> Substrate:
        """The substrate `task` runs on (built once per world, or per task with extra rows)."""
        base = self._base_substrate(task)
        if not task.extra_rows:
            return base
        key = f"task:{task.id}"
        if key not in self._substrates:
            self._substrates[key] = with_extra_rows(base, task.extra_rows)
        return self._substrates[key]

    def _base_substrate(self, task: Task) -> Substrate:
        if self.substrate_of is not None:
            return self.substrate_of(task, self.substrate_choice)
        if task.world not in self._substrates:
            self._substrates[task.world] = world_substrate(
                get_world(task.world), self.substrate_choice
            )
        return self._substrates[task.world]

    def with_variants(self) -> Suite:
        """This suite plus the distractor variant of every task that declares distractors."""
        tasks = dict(self.tasks)
        for task in self.tasks.values():
            if task.distractors:
                variant = distractor_variant(task, self._base_substrate(task))
                if variant.id in tasks:  # task files cannot use the mark; a loader might
                    raise SuiteError(f"variant id {variant.id} is also a task's id")
                tasks[variant.id] = variant
        suite = dataclasses.replace(self, tasks=tasks)
        variants = {i: t for i, t in tasks.items() if i not in self.tasks}
        check_against_schema(variants, suite.initial_image, {})
        return suite

    def initial_image(self, task: Task) -> bytes:
        """The state every run of `task` starts from (one seeded sandbox per substrate)."""
        substrate = self.substrate(task)
        key = f"image:{id(substrate)}"
        if key not in self._images:
            sandbox = substrate.seed("schema-check")
            try:
                self._images[key] = sandbox.initial.image
            finally:
                sandbox.close()
        return self._images[key]

    def check_schema(self, origin: Mapping[str, Path] | None = None) -> Suite:
        """This suite, once every task is proved to fit its world's schema (else SpecError).

        Raises `SuiteError` when the suite has no task at all: an empty audit is a mistake.
        """
        if not self.tasks:
            raise SuiteError(f"suite {self.name!r} holds no task")
        if origin:
            self.origins = dict(origin)
        check_against_schema(self.tasks, self.initial_image, self.origins)
        self.schema_checked = True
        return self

    def select(self, ids: Iterable[str] | None) -> list[Task]:
        """Tasks with the given ids (or all), in suite order; unknown ids or none are an error."""
        if ids is None:
            return list(self.tasks.values())
        wanted = list(ids)
        if not wanted:
            raise SuiteError("no task ids given: name at least one task")
        unknown = [task_id for task_id in wanted if task_id not in self.tasks]
        if unknown:
            raise SuiteError(f"suite {self.name!r} has no task {', '.join(unknown)}")
        return [self.tasks[task_id] for task_id in wanted]

    def describe(self) -> dict[str, Any]:
        """Name, digest and size, for the provenance manifest."""
        return {"name": self.name, "digest": self.digest, "tasks": len(self.tasks)}


SuiteLoader = Callable[[str], Suite]
ENTRY_POINT_GROUP = "kaudit.suites"
"""Third-party packages register suite loaders here: `prefix = "pkg.module:loader"`."""

SUITE_LOADERS: Registry[SuiteLoader] = Registry(
    "suite loader",
    ENTRY_POINT_GROUP,
    builtins=(
        "kaudit.suites._agentrelbench",
        "kaudit.suites._own_world",
        "kaudit.suites._agentdojo",
    ),
    error=SuiteError,
)
"""Loaders for suite references written `PREFIX:ARGUMENT`, by prefix."""


def register_suite_loader(prefix: str) -> Callable[[SuiteLoader], SuiteLoader]:
    """Register a loader for suite references written `PREFIX:ARGUMENT`."""
    return SUITE_LOADERS.register(prefix)


def load_yaml_suite(
    directory: Path,
    name: str | None = None,
    substrate_of: Callable[[Task, str], Substrate] | None = None,
    *,
    check: bool = True,
) -> Suite:
    """Every `*.yaml` task under `directory`, sorted by path; duplicate ids are an error.

    `substrate_of` maps a task to its substrate when the tasks' world is not a registered
    one (a world directory). With `check` every task is proved against its world's schema
    on SQLite now; without, `on_substrate` proves it on the substrate chosen later.
    """
    if not directory.is_dir():
        raise SuiteError(f"suite directory {directory} does not exist")
    digest = hashlib.sha256()
    tasks: dict[str, Task] = {}
    origin: dict[str, Path] = {}
    for path in sorted(directory.rglob("*.yaml")):
        digest.update(path.relative_to(directory).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
        task = load_task(path)
        if task.id in tasks:
            raise SpecError(path, "id", f"duplicate task id, also in {origin[task.id]}")
        tasks[task.id] = task
        origin[task.id] = path
    suite = Suite(
        name=name or str(directory),
        tasks=tasks,
        digest=digest.hexdigest(),
        substrate_of=substrate_of,
        origins=origin,
    )
    return suite.check_schema() if check else suite


def load_suite(
    ref: str = "builtin", substrate: str = DEFAULT_SUBSTRATE, *, check: bool = True
) -> Suite:
    """Resolve `builtin`, a directory of task YAML files, or `PREFIX:ARGUMENT`, on `substrate`.

    Every task of the result is proved against its world's schema on that substrate;
    with `check=False` the suite is returned as loaded, nothing seeded (its tasks are
    then only read, e.g. for `substrates_on`).
    """
    return _load(ref).on_substrate(substrate) if check else _load(ref)


def _load(ref: str) -> Suite:
    if ref == "builtin":
        return load_yaml_suite(BUILTIN_DIR, "builtin")
    prefix, _, argument = ref.partition(":")
    loader = SUITE_LOADERS.find(prefix) if argument else None
    if loader is not None:
        return loader(argument)
    path = Path(ref)
    if path.is_dir():
        return load_yaml_suite(path)
    raise SuiteError(
        f"unknown suite {ref!r}: use 'builtin', a directory, or one of {SUITE_LOADERS.names()}"
    )
