"""AgentDojo's own tool functions as kaudit tools over the sandbox's tables.

A call reads the environment from the sandbox, runs AgentDojo's function on it with
AgentDojo's runtime (its argument validation, its dependency injection), and writes
back only the rows that changed through the sandbox's `Db`: the gateway's faults, the
permission boundary and the recording see the call like any kaudit tool's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from kaudit.tools import Tool, ToolContext, ToolError, ToolTag
from kaudit.worlds.agentdojo._tables import TableLayout, read_env, rows_of, write_changes

READ_PREFIXES = ("get_", "read_", "search_", "list_", "check_")
IRREVERSIBLE_PREFIXES = ("send_", "delete_", "cancel_", "remove_")


def tool_tag(name: str) -> ToolTag:
    """AgentDojo declares no side effects, so the name decides: reads, sends/deletes, the rest.

    `send_money` moves money no tool can take back (irreversible); `update_password`
    can be set again (reversible). A function that turns out to write anyway still has
    its writes applied, recorded and diffed: the tag only informs the linter and tables.
    """
    if name.startswith(READ_PREFIXES):
        return "read"
    return "irreversible" if name.startswith(IRREVERSIBLE_PREFIXES) else "reversible_write"


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def agentdojo_tool(
    function: Any, runtime: Any, tables: Sequence[TableLayout], env_type: type[BaseModel]
) -> Tool:
    """The kaudit tool running AgentDojo `function` (an `agentdojo.functions_runtime.Function`).

    The result is AgentDojo's own text rendering of the return value (YAML for models),
    so a model reads exactly what AgentDojo's pipeline would show it, injections included.
    An exception inside the function is an error the agent sees, after its partial
    writes are kept, as in AgentDojo (where the environment object stays mutated).
    """
    from agentdojo.agent_pipeline.tool_execution import tool_result_to_str

    name: str = function.name
    tag = tool_tag(name)

    def call(ctx: ToolContext, **kwargs: Any) -> Any:
        env = read_env(tables, env_type, lambda sql: ctx.db.query(sql))
        before = rows_of(tables, env)
        result, error = runtime.run_function(env, name, kwargs)
        after = rows_of(tables, env)
        with ctx.db.atomic():
            write_changes(tables, before, after, ctx.db.execute)
        if error is not None:
            raise ToolError(error)
        return tool_result_to_str(result)

    writes = {} if tag == "read" else {t.name: ("*",) for t in tables}
    return Tool(
        name=name,
        description=function.description,
        tag=tag,
        fn=call,
        arguments=function.parameters,
        parameters=_schema(function.parameters),
        writes=writes,
    )
