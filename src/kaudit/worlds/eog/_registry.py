"""The EnterpriseOps-Gym registries of one domain: keys, volatile columns, tools, tags.

They live under `<suite root>/data/eog/` as `<kind>-<domain>.json`. Everything the
emulation knows about the real MCP servers comes from these files and the seed rows,
so their bytes are part of the template's cache key.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaudit.errors import SpecError

KINDS = ("primary-keys", "volatile-columns", "tool-inventory", "tool-tags")

_COMPOSITE = re.compile(r"(\w+) \(([\w ,]+)\)")
"""`table (col_a,col_b)`: how the key registry's `composite_pk_note` spells a composite key."""


@dataclass(frozen=True)
class ToolTagInfo:
    """The registry's reversibility tag of one tool."""

    tag: str


@dataclass(frozen=True)
class DomainRegistry:
    """Everything `data/eog/` says about one domain (`csm`, `itsm`)."""

    primary_keys: dict[str, tuple[str, ...]]
    volatile: dict[str, tuple[str, ...]]
    inventory: dict[str, dict[str, Any]]
    tags: dict[str, ToolTagInfo]
    digest: str


def read_json(path: Path) -> Any:
    """Parse a JSON file; a missing file or a syntax error names the file."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SpecError(path, "<file>", exc.strerror or str(exc)) from None
    except json.JSONDecodeError as exc:
        raise SpecError(path, f"line {exc.lineno}", exc.msg) from None


def _primary_keys(path: Path, data: Any) -> dict[str, tuple[str, ...]]:
    """Registered keys; a `composite_pk_note` naming `table (a,b)` widens that table's key.

    The registry lists one column per table (its labeler keyed on one column) and
    spells the real composite keys only in the note; kaudit's diff keys composite
    rows properly, so the note is honoured when its first column matches the entry.
    """
    if not isinstance(data, dict) or not isinstance(data.get("primary_keys"), dict):
        raise SpecError(path, "primary_keys", "expected a mapping of table to key column(s)")
    keys: dict[str, tuple[str, ...]] = {}
    for table, key in data["primary_keys"].items():
        keys[table] = (key,) if isinstance(key, str) else tuple(key)
    for table, columns in _COMPOSITE.findall(str(data.get("composite_pk_note", ""))):
        composite = tuple(c.strip() for c in columns.split(",") if c.strip())
        if table in keys and composite and keys[table] == composite[:1]:
            keys[table] = composite
    return keys


def _volatile(path: Path, data: Any) -> dict[str, tuple[str, ...]]:
    entries = data.get("volatile_columns") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        raise SpecError(path, "volatile_columns", "expected a mapping of 'table.column' entries")
    volatile: dict[str, list[str]] = {}
    for name, entry in entries.items():
        table = entry.get("table") if isinstance(entry, dict) else None
        column = entry.get("column") if isinstance(entry, dict) else None
        if not table or not column:
            table, _, column = str(name).partition(".")
        if not table or not column:
            raise SpecError(path, f"volatile_columns.{name}", "cannot tell table and column")
        volatile.setdefault(table, []).append(column)
    return {table: tuple(dict.fromkeys(columns)) for table, columns in volatile.items()}


def _inventory(path: Path, data: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(data, list):
        raise SpecError(path, "<root>", "expected a list of tools")
    tools: dict[str, dict[str, Any]] = {}
    for index, entry in enumerate(data):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise SpecError(path, f"[{index}]", "a tool needs a name")
        tools[entry["name"]] = entry
    return tools


def _tags(path: Path, data: Any) -> dict[str, ToolTagInfo]:
    entries = data.get("tags") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise SpecError(path, "tags", "expected a list of {name, tag}")
    return {
        e["name"]: ToolTagInfo(e["tag"])
        for e in entries
        if isinstance(e, dict) and "name" in e and "tag" in e
    }


def load_registry(root: Path, domain: str) -> DomainRegistry:
    """Read the four registries of `domain` below the suite root `root`."""
    folder = root / "data" / "eog"
    paths = {kind: folder / f"{kind}-{domain}.json" for kind in KINDS}
    digest = hashlib.sha256()
    for kind, path in paths.items():
        if not path.is_file():
            raise SpecError(path, "<file>", f"the {kind} registry of domain {domain!r} is missing")
        digest.update(kind.encode() + b"\0" + path.read_bytes())
    return DomainRegistry(
        primary_keys=_primary_keys(paths["primary-keys"], read_json(paths["primary-keys"])),
        volatile=_volatile(paths["volatile-columns"], read_json(paths["volatile-columns"])),
        inventory=_inventory(paths["tool-inventory"], read_json(paths["tool-inventory"])),
        tags=_tags(paths["tool-tags"], read_json(paths["tool-tags"])),
        digest=digest.hexdigest(),
    )
