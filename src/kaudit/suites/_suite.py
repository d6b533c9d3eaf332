"""Suites: named collections of tasks, each knowing which substrate its tasks run on."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from kaudit.errors import SpecError, SuiteError
from kaudit.spec import Task, load_task
from kaudit.substrate import SqliteSubstrate, Substrate
from kaudit.suites._conform import check_against_schema
from kaudit.suites._variants import distractor_variant, with_extra_rows
from kaudit.worlds import get_world

BUILTIN_DIR = Path(__file__).parent / "builtin"


@dataclass
class Suite:
    """Tasks by id plus the substrate each runs on; `digest` pins the exact task files."""

    name: str
    tasks: dict[str, Task]
    digest: str
    substrate_of: Callable[[Task], Substrate] | None = None
    lint: bool = True
    """Whether `kaudit validate` lints the tasks (off for imported third-party suites)."""
    _substrates: dict[str, Substrate] = field(default_factory=dict)
    _images: dict[str, bytes] = field(default_factory=dict)
    schema_checked: bool = False
    """Whether `check_schema` proved every task against its world."""

    def substrate(self, task: Task) -> Substrate:
        """The substrate `task` runs on (built once per world, or per task with extra rows)."""
        base = self._base_substrate(task)
        if not task.extra_rows:
            return base
        key = f"task:{task.id}"
        if key not in self._substrates:
            if not isinstance(base, SqliteSubstrate):
                raise SuiteError(f"task {task.id}: extra_rows need a SQLite substrate")
            self._substrates[key] = with_extra_rows(base, task.extra_rows)
        return self._substrates[key]

    def _base_substrate(self, task: Task) -> Substrate:
        if self.substrate_of is not None:
            return self.substrate_of(task)
        if task.world not in self._substrates:
            self._substrates[task.world] = get_world(task.world).substrate()
        return self._substrates[task.world]

    def with_variants(self) -> Suite:
        """This suite plus the distractor variant of every task that declares distractors."""
        tasks = dict(self.tasks)
        for task in self.tasks.values():
            if task.distractors:
                variant = distractor_variant(task, self._base_substrate(task))
                tasks[variant.id] = variant
        suite = Suite(
            name=self.name,
            tasks=tasks,
            digest=self.digest,
            substrate_of=self.substrate_of,
            lint=self.lint,
            _substrates=self._substrates,
            _images=self._images,
            schema_checked=self.schema_checked,
        )
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
        check_against_schema(self.tasks, self.initial_image, origin or {})
        self.schema_checked = True
        return self

    def select(self, ids: Iterable[str] | None) -> list[Task]:
        """Tasks with the given ids (or all), in suite order; unknown ids are an error."""
        if ids is None:
            return list(self.tasks.values())
        wanted = list(ids)
        unknown = [task_id for task_id in wanted if task_id not in self.tasks]
        if unknown:
            raise SuiteError(f"suite {self.name!r} has no task {', '.join(unknown)}")
        return [self.tasks[task_id] for task_id in wanted]

    def describe(self) -> dict[str, Any]:
        """Name, digest and size, for the provenance manifest."""
        return {"name": self.name, "digest": self.digest, "tasks": len(self.tasks)}


SuiteLoader = Callable[[str], Suite]
_LOADERS: dict[str, SuiteLoader] = {}
ENTRY_POINT_GROUP = "kaudit.suites"
"""Third-party packages register suite loaders here: `prefix = "pkg.module:loader"`."""


def register_suite_loader(prefix: str) -> Callable[[SuiteLoader], SuiteLoader]:
    """Register a loader for suite references written `PREFIX:ARGUMENT`."""

    def wrap(loader: SuiteLoader) -> SuiteLoader:
        _LOADERS[prefix] = loader
        return loader

    return wrap


def load_yaml_suite(directory: Path, name: str | None = None) -> Suite:
    """Every `*.yaml` task under `directory`, sorted by path; duplicate ids are an error."""
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
    suite = Suite(name=name or str(directory), tasks=tasks, digest=digest.hexdigest())
    return suite.check_schema(origin)


def load_suite(ref: str = "builtin") -> Suite:
    """Resolve `builtin`, a directory of task YAML files, or `PREFIX:ARGUMENT`."""
    if ref == "builtin":
        return load_yaml_suite(BUILTIN_DIR, "builtin")
    prefix, _, argument = ref.partition(":")
    if argument and prefix not in _LOADERS:
        _load_plugins(prefix)
    if argument and prefix in _LOADERS:
        loaded = _LOADERS[prefix](argument)
        return loaded if loaded.schema_checked else loaded.check_schema()
    path = Path(ref)
    if path.is_dir():
        return load_yaml_suite(path)
    raise SuiteError(
        f"unknown suite {ref!r}: use 'builtin', a directory, or one of {sorted(_LOADERS)}"
    )


def _load_plugins(prefix: str) -> None:
    """Import the loader for `prefix`: the built-in AgentRelBench one, or a package's."""
    with contextlib.suppress(ModuleNotFoundError):
        import kaudit.substrate.eog  # noqa: F401  (registers the agentrelbench loader)
    if prefix not in _LOADERS:
        for ep in entry_points(group=ENTRY_POINT_GROUP, name=prefix):
            _LOADERS[prefix] = ep.load()
