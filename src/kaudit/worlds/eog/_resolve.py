"""Which table a tool works on and which shape it has, read from its inventory entry.

Nothing here is written per tool: the table is the one whose columns cover most of the
tool's schema properties (ties broken by how well the table's name matches the tool's
name), and the shape follows from the tool's verb, its output schema and its
description. The few readings a description leaves open are listed in `READINGS`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kaudit.errors import SpecError
from kaudit.tools import ToolTag
from kaudit.worlds.eog._registry import ToolTagInfo
from kaudit.worlds.eog._tables import TableInfo

Shape = Literal["lookup", "list", "count", "update", "create", "link", "unlink", "delete", "send"]

SHAPE_TAGS: dict[Shape, ToolTag] = {
    "lookup": "read",
    "list": "read",
    "count": "read",
    "update": "reversible_write",
    "link": "reversible_write",
    "create": "irreversible",
    "send": "irreversible",
    "delete": "irreversible",
    "unlink": "irreversible",
}
"""Fallback tags for a tool the tag registry does not list."""

FILTERED_SHAPES: frozenset[Shape] = frozenset({"lookup", "list", "count", "delete"})
"""Shapes that select rows by their inputs (the others set columns from them)."""

CREATING_SHAPES: frozenset[Shape] = frozenset({"create", "send", "link"})
"""Shapes that insert a row, with a new key in the seed's scheme unless one is given."""

REGISTRY_TAGS: dict[str, ToolTag] = {
    "read": "read",
    "reversible-write": "reversible_write",
    "compensable": "reversible_write",
    "irreversible": "irreversible",
}
"""EOG tag -> kaudit tag. `compensable` (a delete twin exists) can be undone by a tool."""

_CREATE_VERBS = {"create", "add", "enlist", "register", "link", "map"}
_READ_VERBS = {"find", "get", "retrieve", "list", "search"}
_LINK_WORDS = re.compile(r"\b(link|linkage|mapping|relationship)\b", re.IGNORECASE)
_LIST_WORDS = re.compile(r"\blist\b|\bretrieve all\b|\breturns a list\b", re.IGNORECASE)
_SINGLE = re.compile(r"\breturns a single\b", re.IGNORECASE)


@dataclass(frozen=True)
class ToolPlan:
    """How one inventory tool is emulated."""

    name: str
    table: str
    shape: Shape
    tag: ToolTag
    spec: Mapping[str, Any]

    @property
    def inputs(self) -> dict[str, dict[str, Any]]:
        """Input properties by name."""
        return spec_inputs(self.spec)

    @property
    def required(self) -> tuple[str, ...]:
        """Required inputs."""
        return tuple(self.spec.get("inputSchema", {}).get("required", ()))

    @property
    def any_of(self) -> tuple[str, ...]:
        """Inputs of which the schema's `anyOf` demands at least one."""
        options = self.spec.get("inputSchema", {}).get("anyOf", ())
        return tuple(name for option in options for name in option.get("required", ()))

    @property
    def outputs(self) -> dict[str, dict[str, Any]]:
        """Output properties (of the object, or of each array item); empty when unschemed."""
        return spec_outputs(self.spec)

    @property
    def returns_list(self) -> bool:
        """Whether the output schema is an array."""
        return spec_returns_list(self.spec)

    @property
    def description(self) -> str:
        """The inventory description, as the model reads it."""
        return spec_description(self.spec)


def spec_inputs(spec: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """An inventory entry's input properties by name."""
    return dict(spec.get("inputSchema", {}).get("properties", {}))


def spec_outputs(spec: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """An inventory entry's output properties (of the object, or of each array item)."""
    out = spec.get("outputSchema") or {}
    if out.get("type") == "array":
        out = out.get("items") or {}
    return dict(out.get("properties") or {})


def spec_returns_list(spec: Mapping[str, Any]) -> bool:
    """Whether an inventory entry's output schema is an array."""
    return (spec.get("outputSchema") or {}).get("type") == "array"


def spec_description(spec: Mapping[str, Any]) -> str:
    """An inventory entry's description, as the model reads it."""
    return str(spec.get("description", ""))


def tokens(name: str) -> list[str]:
    """Snake-case words, each reduced to a naive singular ('cases' -> 'case')."""
    return [
        w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
        for w in name.split("_")
    ]


def column_for(prop: str, table: TableInfo) -> str | None:
    """The column a property names directly, as a bound, a range end or a plural list."""
    if table.has(prop):
        return prop
    for suffix in ("_after", "_before", "_range_start", "_range_end"):
        if prop.endswith(suffix):
            base = prop[: -len(suffix)]
            if base == "created":
                return table.created
            return base if table.has(base) else None
    for plural in (prop[:-1], prop[:-2]):
        if prop.endswith("s") and table.has(plural):
            return plural
    return None


def _name_score(tool: str, table: str) -> tuple[int, int]:
    """(table words found minus missing, minus the position of the first one found).

    The second part prefers the verb's object: `find_notifications_sent_for_incident`
    reads notifications, not incidents.
    """
    words, own = tokens(tool), tokens(table)
    matched = sum(1 for w in own if w in words)
    if not matched:
        return (-99, 0)
    first = min(words.index(w) for w in own if w in words)
    return (matched - (len(own) - matched), -first)


def resolve_table(spec: Mapping[str, Any], tables: Mapping[str, TableInfo]) -> str | None:
    """The table the tool most plausibly reads or writes, or None when no column matches."""
    name = str(spec["name"])
    props = set(spec_inputs(spec)) | set(spec_outputs(spec))
    best: tuple[int, tuple[int, int]] | None = None
    chosen: str | None = None
    for table in tables.values():
        coverage = sum(1 for p in props if column_for(p, table) is not None)
        score = (coverage, _name_score(name, table.name))
        if coverage and (best is None or score > best):
            best, chosen = score, table.name
    return chosen


def classify(spec: Mapping[str, Any]) -> Shape | None:
    """The tool's shape from its verb, output schema and description; None if unknown."""
    words = str(spec["name"]).split("_")
    description = spec_description(spec)
    verb = words[0]
    if verb == "delete":
        return "delete"
    if verb == "remove":
        return "unlink"
    if verb in ("update", "set"):
        return "update"
    if verb == "send":
        return "send"
    if verb in _CREATE_VERBS:
        return "link" if _LINK_WORDS.search(description) else "create"
    if "count" in words or "counts" in words:
        return "count"
    if verb in _READ_VERBS:
        if spec_returns_list(spec):
            return "list"
        if spec_outputs(spec) or _SINGLE.search(description):
            return "lookup"
        return "list" if verb == "list" or _LIST_WORDS.search(description) else "lookup"
    return None


def plan_tool(
    spec: Mapping[str, Any], tables: Mapping[str, TableInfo], tags: Mapping[str, ToolTagInfo]
) -> ToolPlan:
    """The emulation plan of one inventory tool; a tool that fits no shape is an error."""
    name = str(spec.get("name"))
    shape = classify(spec)
    table = resolve_table(spec, tables)
    if shape is None or table is None:
        raise SpecError("tool-inventory", name, "no emulation shape or table fits this tool")
    info = tags.get(name)
    tag = REGISTRY_TAGS.get(info.tag, SHAPE_TAGS[shape]) if info else SHAPE_TAGS[shape]
    return ToolPlan(name, table, shape, tag, spec)
