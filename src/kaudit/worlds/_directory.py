"""Your own world: a directory with `world.yaml`, a schema-and-seed SQL file and a tools module.

    my-world/
      world.yaml     name, version, and optionally schema / tools / tasks / volatile
      schema.sql     CREATE TABLE ... and INSERT ... (run by SQLite; see docs/own-world.md)
      tools.py       plain typed functions decorated with `kaudit.tools.tool`
      tasks/*.yaml   kaudit task files whose `world:` is this world's name

The SQL file is the seeded state: it is run once into a SQLite template, cached by a
digest over the three files, and every substrate (SQLite or PostgreSQL) starts from it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sqlite3
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from pydantic import BaseModel, ConfigDict

from kaudit.errors import SpecError
from kaudit.postgres import postgres_world_image
from kaudit.spec._load import validate_file_data
from kaudit.spec._yaml import read_yaml
from kaudit.substrate import ForeignKey, cached_image
from kaudit.tools import Tool
from kaudit.worlds._protocol import FixedTools

MANIFEST = "world.yaml"


class WorldManifest(BaseModel):
    """`world.yaml`: what the world is called and where its parts are (paths relative to it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """The name task files give as `world:`."""
    version: str = "1"
    """Bump to rebuild the template when nothing in the files changed but its meaning did."""
    schema_file: str | None = None
    """SQL run by SQLite on an empty database: the tables and their seed rows.

    `schema.sql` unless `template_url` is given instead."""
    template_url: str | None = None
    """An existing PostgreSQL database (`postgresql://user@host:port/db`) whose tables and
    rows are the seeded state; such a world runs only on a PostgreSQL substrate on the
    same server, cloned from that database."""
    tools: str = "tools.py"
    """Python module whose module-level `@tool` functions are the world's tools."""
    tasks: str = "tasks"
    """Folder of task YAML files (searched recursively)."""
    volatile: dict[str, tuple[str, ...]] = {}
    """Columns per table that change by themselves (timestamps), masked by every task."""
    ownership: tuple[OwnershipLink, ...] = ()
    """Which rows belong to which, for a schema that declares no foreign keys: a scope
    then covers the child rows of its rows as it covers rows with its column."""


class OwnershipLink(BaseModel):
    """`table(columns)` rows belong to the `parent` row whose `parent_columns` match.

    `parent_columns` defaults to the parent's primary key, as in SQL's REFERENCES.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    table: str
    columns: tuple[str, ...]
    parent: str
    parent_columns: tuple[str, ...] = ()


def _import_tools(path: Path, world: str) -> dict[str, Tool]:
    """Every module-level `Tool` of the file at `path`; an import error names the file.

    The module may import its sibling modules: relatively (`from . import helpers`, the
    directory is its package) or by their own names (`import helpers`, the directory is
    on `sys.path` while the module runs; such a module keeps its plain name).
    """
    package = f"kaudit_world_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"
    module_name = f"{package}.{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None or not path.is_file():
        raise SpecError(path, "<file>", "the tools module is missing")
    parent = ModuleType(package)
    parent.__path__ = [str(path.parent)]
    sys.modules.setdefault(package, parent)
    module: ModuleType = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pydantic look their module up here
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # user code: any failure is their file's error, named
        sys.modules.pop(module_name, None)
        raise SpecError(path, "<module>", f"{type(exc).__name__}: {exc}") from None
    finally:
        sys.path.remove(str(path.parent))
    tools = {t.name: t for t in vars(module).values() if isinstance(t, Tool)}
    if not tools:
        raise SpecError(path, "<module>", f"world {world} defines no @tool function")
    return tools


@dataclass
class DirectoryWorld(FixedTools):
    """A world read from a directory (see the module docstring for the layout)."""

    root: Path
    manifest: WorldManifest
    tools: dict[str, Tool] = field(repr=False)
    _source: tuple[str, bytes] | None = field(default=None, init=False, repr=False)

    @classmethod
    def load(cls, root: Path) -> DirectoryWorld:
        """The world in `root`; a missing or malformed part fails naming its file."""
        path = root / MANIFEST
        if not path.is_file():
            raise SpecError(path, "<file>", "a world directory needs a world.yaml")
        manifest = validate_file_data(WorldManifest, read_yaml(path), path)
        if manifest.template_url is not None and manifest.schema_file is not None:
            raise SpecError(path, "template_url", "give schema_file or template_url, not both")
        if manifest.template_url is None:
            schema = root / (manifest.schema_file or "schema.sql")
            if not schema.is_file():
                raise SpecError(path, "schema_file", f"{schema} does not exist")
        return cls(root, manifest, _import_tools(root / manifest.tools, manifest.name))

    @property
    def name(self) -> str:
        """The world's name from world.yaml."""
        return self.manifest.name

    @property
    def volatile(self) -> dict[str, tuple[str, ...]]:
        """Volatile columns from world.yaml."""
        return dict(self.manifest.volatile)

    @property
    def ownership(self) -> tuple[ForeignKey, ...]:
        """The foreign keys world.yaml declares (`ownership:`), for a boundary's scope."""
        return tuple(
            ForeignKey(link.table, link.columns, link.parent, link.parent_columns)
            for link in self.manifest.ownership
        )

    @property
    def ownership_file(self) -> Path:
        """The file `ownership` is read from, for errors that name it."""
        return self.root / MANIFEST

    @property
    def schema_path(self) -> Path:
        """The schema-and-seed SQL file."""
        return self.root / (self.manifest.schema_file or "schema.sql")

    def source(self) -> tuple[str, bytes] | None:
        """(database name, image) of a world read from `template_url`, read once; else None."""
        if self.manifest.template_url is None:
            return None
        if self._source is None:
            self._source = postgres_world_image(self.manifest.template_url)
        return self._source

    @property
    def tasks_dir(self) -> Path:
        """The folder of task YAML files."""
        return self.root / self.manifest.tasks

    def _sibling_modules(self) -> list[str]:
        """The other Python files beside the tools module, which it may import."""
        tools = (self.root / self.manifest.tools).resolve()
        return sorted(
            str(path.relative_to(self.root))
            for path in self.root.glob("*.py")
            if path.resolve() != tools
        )

    def recipe_digest(self) -> str:
        """sha256 over world.yaml, the tools module and its siblings, and the SQL file.

        A world read from `template_url` digests the database's rows instead of SQL.
        """
        digest = hashlib.sha256(b"kaudit-directory-world\0")
        for part in (MANIFEST, self.manifest.tools, *self._sibling_modules()):
            digest.update(part.encode() + b"\0" + (self.root / part).read_bytes())
        source = self.source()
        digest.update(self.schema_path.read_bytes() if source is None else source[1])
        return digest.hexdigest()

    def build(self, conn: sqlite3.Connection) -> None:
        """Run the SQL file; an SQL error names the file."""
        try:
            conn.executescript(self.schema_path.read_text(encoding="utf-8"))
        except sqlite3.Error as exc:
            raise SpecError(self.schema_path, "<sql>", str(exc)) from None

    def template_image(self) -> bytes:
        """The seeded template, built once per recipe digest and cached on disk.

        A world read from `template_url` is read from that database instead (once).
        """
        source = self.source()
        return cached_image(self.recipe_digest(), self.build) if source is None else source[1]

    @property
    def source_database(self) -> str | None:
        """The PostgreSQL database a `template_url` world is cloned from, else None."""
        source = self.source()
        return None if source is None else source[0]
