"""The `agentrelbench:PATH` suite loader: AgentRelBench task folders as kaudit tasks.

Every folder at any depth under PATH holding a `task.json` is a task, named by its
folder. The suite root is the nearest folder at or above PATH holding both
`data/seed-dbs/` and `data/eog/`; seed files resolve against it. Tasks sharing a seed
share one `EogWorld` (one cached template); each task is offered only its own tools.

A folder holds `task.json` (EnterpriseOps-Gym task), `damage.json` (whitelist and
pricing), `oracle.script.json`, `counterexamples/*.script.json` and `RATIONALE.md`.
Every piece goes through the kaudit pydantic models, so a malformed file fails with
its path and field.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaudit.errors import SpecError, SuiteError
from kaudit.spec import DamageSpec, Expected, Task
from kaudit.spec._load import validate_file_data as validate
from kaudit.spec._script import Script, ScriptStep
from kaudit.spec._task import Check
from kaudit.substrate import Substrate
from kaudit.suites._suite import SUITE_LOADERS, Suite
from kaudit.worlds.eog import DomainRegistry, EogWorld, ToolTagInfo, load_registry
from kaudit.worlds.eog._registry import read_json

COMPARISONS = {
    "equals": "equals",
    "not_equals": "not_equals",
    "greater_than": "greater_than",
    "less_than": "less_than",
    "greater_than_or_equal": "at_least",
    "greater_than_or_equals": "at_least",
    "less_than_or_equal": "at_most",
    "less_than_or_equals": "at_most",
}
"""EnterpriseOps-Gym `comparison_type` -> kaudit `Check.compare`."""

REFUSAL_TOKEN = "REFUSAL:"
DAMAGE_KEYS = frozenset({"task_id", "domain", "params", "predicted_lever", "allowed", "pricing"})


@dataclass(frozen=True)
class TaskSource:
    """A loaded task plus what picks its substrate: domain, seed file and acting user."""

    task: Task
    domain: str
    seed_file: Path
    user_id: Any


def _mapping(path: Path) -> dict[str, Any]:
    data = read_json(path)
    if not isinstance(data, dict):
        raise SpecError(path, "<root>", "expected a JSON object")
    return data


def checks(path: Path, verifiers: Any) -> tuple[Check, ...]:
    """`database_state` verifiers as checks, the SQL run exactly as written."""
    if not isinstance(verifiers, list) or not verifiers:
        raise SpecError(path, "verifiers", "a task needs at least one verifier")
    out: list[Check] = []
    for i, verifier in enumerate(verifiers):
        where = f"verifiers[{i}]"
        if not isinstance(verifier, dict) or verifier.get("verifier_type") != "database_state":
            raise SpecError(path, where, "only database_state verifiers can be judged from state")
        config = verifier.get("validation_config") or {}
        compare = COMPARISONS.get(str(config.get("comparison_type", "equals")))
        if compare is None:
            raise SpecError(
                path, f"{where}.comparison_type", f"unknown {config.get('comparison_type')!r}"
            )
        data = {
            "name": verifier.get("name", f"verifier_{i}"),
            "sql": config.get("query"),
            "expected": config.get("expected_value"),
            "compare": compare,
        }
        out.append(validate(Check, data, path))
    return tuple(out)


def damage_spec(
    path: Path, data: Mapping[str, Any], volatile: Mapping[str, tuple[str, ...]]
) -> DamageSpec:
    """`allowed` and `pricing` as kaudit rules, plus the domain's volatile columns."""
    unknown = set(data) - DAMAGE_KEYS
    if unknown:
        raise SpecError(path, sorted(unknown)[0], "unknown damage.json key")
    rules = {"allowed": data.get("allowed", ()), "pricing": data.get("pricing", ())}
    return validate(DamageSpec, {**rules, "volatile": dict(volatile)}, path)


def script(path: Path, name: str) -> Script:
    """A script file: `expected` (with `eog_success` as `success`), `script` steps, `note`."""
    data = _mapping(path)
    expected = dict(data.get("expected") or {})
    if "eog_success" in expected:
        expected["success"] = expected.pop("eog_success")
    steps = [validate(ScriptStep, step, path) for step in data.get("script") or ()]
    return validate(
        Script,
        {
            "name": name,
            "expected": validate(Expected, expected, path),
            "note": data.get("note"),
            "steps": steps,
        },
        path,
    )


def irreversibility(tools: tuple[str, ...], tags: Mapping[str, ToolTagInfo]) -> str:
    """'substrate' if an offered tool is tagged irreversible in the tag registry.

    Such a tool (a delete, a send, a create with no delete twin) leaves damage no tool can
    undo. Otherwise only reversible writes are offered and damage is 'governance': a
    change committed past a gate, which resetting a column does not un-commit.
    """
    return (
        "substrate"
        if any(tags.get(t) and tags[t].tag == "irreversible" for t in tools)
        else "governance"
    )


def _server(path: Path, task: Mapping[str, Any]) -> Mapping[str, Any]:
    servers = task.get("gym_servers_config")
    if not isinstance(servers, list) or len(servers) != 1 or not isinstance(servers[0], dict):
        raise SpecError(path, "gym_servers_config", "exactly one gym server is supported")
    if not servers[0].get("seed_database_file"):
        raise SpecError(path, "gym_servers_config[0].seed_database_file", "missing")
    return servers[0]


def load_task_folder(
    folder: Path, root: Path, registry: Callable[[str], DomainRegistry]
) -> TaskSource:
    """The task in `folder`; its id is the folder's name, its seed resolves against `root`.

    The domain is damage.json's `domain`, else the seed file's folder name
    (`data/seed-dbs/<domain>/...`); `registry(domain)` gives its volatile columns and tags.
    """
    task_path, damage_path = folder / "task.json", folder / "damage.json"
    data, damage = _mapping(task_path), _mapping(damage_path)
    server = _server(task_path, data)
    seed_file = (root / str(server["seed_database_file"])).resolve()
    domain = str(damage.get("domain") or seed_file.parent.name)
    known = registry(domain)
    volatile, tags = known.volatile, known.tags
    restricted = set(data.get("restricted_tools") or ())
    tools = tuple(t for t in data.get("selected_tools") or () if t not in restricted)
    oracle = script(folder / "oracle.script.json", "oracle")
    if oracle.expected.outcome != "PASS" or oracle.expected.success is False:
        raise SpecError(folder / "oracle.script.json", "expected", "an oracle must declare PASS")
    counterexamples = tuple(
        script(p, p.name.removesuffix(".script.json"))
        for p in sorted((folder / "counterexamples").glob("*.script.json"))
    )
    rationale = folder / "RATIONALE.md"
    lever = damage.get("predicted_lever") or {}
    fields = {
        "id": folder.name,
        "vertical": domain,
        "world": f"eog-{domain}:{seed_file.stem}",
        "irreversibility": irreversibility(tools, tags),
        "lever": lever.get("lever") if isinstance(lever, dict) else None,
        "rationale": rationale.read_text(encoding="utf-8") if rationale.is_file() else "",
        "system_prompt": data.get("system_prompt", ""),
        "prompt": data.get("user_prompt", ""),
        "tools": tools,
        "params": damage.get("params") or {},
        "checks": checks(task_path, data.get("verifiers")),
        "damage": damage_spec(damage_path, damage, volatile),
        "refusal_token": REFUSAL_TOKEN,
        "convention": "agentrelbench",
        "oracle": oracle.steps,
        "counterexamples": counterexamples,
    }
    user = server.get("user_info") or {}
    return TaskSource(validate(Task, fields, task_path), domain, seed_file, user.get("user_id"))


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

    def substrate_of(task: Task, choice: str) -> Substrate:
        source = sources[task.id]
        return worlds.world(source).substrate(source.task.tools, source.user_id, choice)

    tasks = {task_id: source.task for task_id, source in sources.items()}
    return Suite(
        name=f"agentrelbench:{argument}",
        tasks=tasks,
        digest=digest.hexdigest(),
        substrate_of=substrate_of,
        lint=False,  # published third-party specs: report them, never rewrite them
    ).check_schema(origin)


SUITE_LOADERS.register("agentrelbench")(load_agentrelbench_suite)
