"""Turning a tool plan into a kaudit `Tool`.

Arguments are validated against the inventory's own input schema; the call goes to
the plan's shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, create_model

from kaudit.errors import SpecError
from kaudit.tools import Tool, ToolContext
from kaudit.worlds.eog._resolve import FILTERED_SHAPES, ToolPlan
from kaudit.worlds.eog._shapes import SHAPES, Caller, Emulation, IdScheme, filters_for
from kaudit.worlds.eog._tables import TableInfo

_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool}


def python_type(schema: Mapping[str, Any]) -> Any:
    """The Python type a JSON-schema property validates as (enums as `Literal`)."""
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    nullable = "null" in kinds
    kind = next((k for k in kinds if k != "null"), None)
    if "enum" in schema:
        base: Any = Literal[tuple(schema["enum"])]
    elif kind == "array":
        base = list[python_type(schema.get("items") or {})]  # type: ignore[misc]
    elif kind == "object":
        base = dict[str, Any]
    else:
        base = _SCALARS.get(str(kind), Any)
    return base | None if nullable else base


def arguments_model(name: str, schema: Mapping[str, Any]) -> type[BaseModel]:
    """A pydantic model of the input schema: required fields required, unknown keys refused."""
    required = set(schema.get("required", ()))
    fields: dict[str, Any] = {}
    for prop, prop_schema in (schema.get("properties") or {}).items():
        kind = python_type(prop_schema)
        fields[prop] = (kind, ...) if prop in required else (kind | None, None)
    model: type[BaseModel] = create_model(
        f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
    )
    return model


def _check_writable(plan: ToolPlan, table: TableInfo) -> None:
    """Write shapes set columns by input name; an input that is no column is a plan error."""
    if plan.shape in FILTERED_SHAPES:
        return
    unknown = [p for p in plan.inputs if not table.has(p)]
    if unknown:
        raise SpecError(
            "tool-inventory", plan.name, f"inputs {unknown} are not columns of {table.name}"
        )
    if plan.shape == "update" and not set(table.primary_key) <= set(plan.required):
        raise SpecError("tool-inventory", plan.name, f"an update needs the key {table.primary_key}")


def _writes(plan: ToolPlan, table: TableInfo, bumps: bool) -> dict[str, tuple[str, ...]]:
    if plan.shape == "update":
        columns = [p for p in plan.inputs if p not in table.primary_key]
        if bumps and table.updated:
            columns.append(table.updated)
        return {table.name: tuple(columns)}
    if plan.shape in ("create", "send", "link", "delete", "unlink"):
        return {table.name: ("*",)}
    return {}


def build_tool(
    plan: ToolPlan,
    tables: Mapping[str, TableInfo],
    caller: Caller,
    volatile: Mapping[str, tuple[str, ...]],
    ids: IdScheme | None = None,
) -> Tool:
    """The kaudit tool for `plan`; its JSON schema is the inventory's, unchanged."""
    table = tables[plan.table]
    _check_writable(plan, table)
    bumps = table.updated is not None and table.updated in volatile.get(table.name, ())
    em = Emulation(
        plan,
        table,
        tables,
        caller,
        bumps_updated=bumps,
        filters=filters_for(plan, table),
        ids=ids,
    )
    run = SHAPES[plan.shape]

    def call(ctx: ToolContext, **kwargs: Any) -> Any:
        return run(em, ctx.db, {k: v for k, v in kwargs.items() if v is not None})

    schema = dict(plan.spec.get("inputSchema") or {"type": "object", "properties": {}})
    return Tool(
        name=plan.name,
        description=plan.description,
        tag=plan.tag,
        fn=call,
        arguments=arguments_model(plan.name, schema),
        parameters=schema,
        writes=_writes(plan, table, bumps),
    )
