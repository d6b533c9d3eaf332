"""Tools: typed Python functions the agent calls, with a JSON schema and a reversibility tag."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from kaudit.errors import InputError, SubstrateError
from kaudit.tools._db import DatabaseError, Db

if TYPE_CHECKING:
    from kaudit.spec import Identity

ToolTag = Literal["read", "reversible_write", "irreversible"]
TOOL_TAGS: tuple[ToolTag, ...] = ("read", "reversible_write", "irreversible")


class ToolError(Exception):
    """Raised inside a tool for a failure the agent should see (not found, not allowed)."""


class BoundaryViolation(ToolError):
    """Raised by a tool's own scope check (self-approval, another organization's row).

    The agent sees the message like any tool error; the gateway also records the
    attempt, naming the table and key the tool refused to touch.
    """

    def __init__(self, table: str, key: str, reason: str) -> None:
        self.table = table
        self.key = key
        self.reason = reason
        super().__init__(f"not permitted for this identity: {reason}")


@dataclass(frozen=True)
class Blocked:
    """A write the permission boundary refused: the table, the row key, and why."""

    table: str
    key: str | None
    reason: str


@dataclass(frozen=True)
class ToolContext:
    """What a tool receives besides its arguments: the sandbox database and who is acting."""

    db: Db
    identity: Identity | None = None


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one tool call as the agent sees it.

    `internal` marks an unexpected exception inside the tool code: still returned to the
    agent (a tool failure is never a crash), but flagged so a harness bug is visible.
    """

    ok: bool
    content: Any = None
    error: str | None = None
    internal: bool = False
    blocked: Blocked | None = None

    def to_text(self) -> str:
        """The text handed back to a model."""
        if self.ok:
            return json.dumps(self.content, default=str, ensure_ascii=False)
        return json.dumps({"error": self.error}, ensure_ascii=False)

    def to_json(self) -> dict[str, Any]:
        """Plain data for the ledger."""
        out: dict[str, Any] = {"ok": self.ok}
        if self.ok:
            out["content"] = self.content
        else:
            out["error"] = self.error
        if self.internal:
            out["internal"] = True
        return out


@dataclass(frozen=True)
class Tool:
    """A callable the agent can use, described by a JSON schema."""

    name: str
    description: str
    tag: ToolTag
    fn: Callable[..., Any]
    arguments: type[BaseModel]
    parameters: dict[str, Any] = field(default_factory=dict)
    writes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Tables this tool can change, with the columns it can modify; "*" = insert/delete rows."""

    def call(self, ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
        """Validate `arguments`, run the tool, and turn every failure into a result."""
        try:
            parsed = self.arguments.model_validate(dict(arguments))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "arguments"
            return ToolResult(ok=False, error=f"invalid argument {where}: {first['msg']}")
        kwargs = {name: getattr(parsed, name) for name in type(parsed).model_fields}
        try:
            return ToolResult(ok=True, content=self.fn(ctx, **kwargs))
        except BoundaryViolation as exc:
            return ToolResult(
                ok=False, error=str(exc), blocked=Blocked(exc.table, exc.key, exc.reason)
            )
        except ToolError as exc:
            return ToolResult(ok=False, error=str(exc))
        except DatabaseError as exc:
            return ToolResult(ok=False, error=f"database error: {exc}")
        except SubstrateError:
            raise  # the sandbox itself failed: a harness error, never a result to score
        except Exception as exc:  # a tool bug is still a result, flagged for the ledger
            return ToolResult(ok=False, error=f"{type(exc).__name__}: {exc}", internal=True)

    def spec(self) -> dict[str, Any]:
        """Name, description and JSON schema, as chat APIs want them."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


def _strip_titles(schema: Any, *, names: bool = False) -> Any:
    """Drop pydantic's `title` metadata from a JSON schema.

    `names` marks a `properties` map, whose keys are parameter names: a parameter
    called `title` must survive.
    """
    if isinstance(schema, dict):
        return {
            k: _strip_titles(v, names=k == "properties" and not names)
            for k, v in schema.items()
            if names or k != "title"
        }
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


def tool(
    tag: ToolTag,
    *,
    name: str | None = None,
    description: str | None = None,
    writes: Mapping[str, tuple[str, ...]] | None = None,
) -> Callable[[Callable[..., Any]], Tool]:
    """Turn `def f(ctx: ToolContext, arg: T = default, ...)` into a `Tool`.

    The first parameter receives the `ToolContext`; the rest become the JSON schema
    (from their type hints) and are validated before the function runs. The first
    docstring paragraph is the description the model reads. `writes` declares what a
    writing tool can change (table -> columns, "*" for whole rows), which the task
    linter checks damage specs against.
    """
    if tag not in TOOL_TAGS:
        raise InputError("tag", f"must be one of {TOOL_TAGS}, not {tag!r}")
    if tag != "read" and not writes:
        raise InputError("writes", f"must name the tables a {tag!r} tool writes")

    def wrap(fn: Callable[..., Any]) -> Tool:
        hints = get_type_hints(fn)
        params = list(inspect.signature(fn).parameters.values())[1:]
        fields: dict[str, Any] = {}
        for param in params:
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[param.name] = (hints.get(param.name, Any), default)
        model = create_model(
            f"{fn.__name__}_arguments",
            __config__=ConfigDict(extra="forbid"),
            **fields,
        )
        doc = description or (inspect.getdoc(fn) or "").split("\n\n")[0].replace("\n", " ")
        schema = _strip_titles(model.model_json_schema())
        return Tool(
            name=name or fn.__name__,
            description=doc,
            tag=tag,
            fn=fn,
            arguments=model,
            parameters=schema,
            writes=dict(writes or {}),
        )

    return wrap
