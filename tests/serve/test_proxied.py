"""How a third-party server's tools become kaudit tools: tags, names, refusals."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest

from kaudit.agents._build import build_agents
from kaudit.errors import KauditError
from kaudit.serve import CommandAgent, ToolDoor
from kaudit.serve._proxied import ProxiedTool, parse_tool_tags, proxied_tools, tag_for
from kaudit.serve._upstream import ToolServer, WorldAddress, tool_result, tools_argv
from kaudit.suites import load_suite

SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}}


def listed(name: str, **hints: bool) -> types.Tool:
    annotations = types.ToolAnnotations(**hints) if hints else None
    return types.Tool(name=name, input_schema=SCHEMA, annotations=annotations)


def server(tmp_path: Path) -> ToolServer:
    return ToolServer(["unused"], WorldAddress(tmp_path / "w.sqlite", None, tmp_path))


def test_a_tool_nobody_tagged_is_irreversible_and_hints_or_the_user_decide_otherwise() -> None:
    """Fails if an unannotated tool defaults to `read` (faults would skip its writes), if
    the server's hints are ignored, or if the user's tag does not win over them."""
    user = parse_tool_tags("fetch=read, purge = irreversible")
    assert tag_for(listed("write_query"), {}) == "irreversible"
    assert tag_for(listed("read_query", read_only_hint=True), {}) == "read"
    assert tag_for(listed("upsert", destructive_hint=False), {}) == "reversible_write"
    assert tag_for(listed("purge", read_only_hint=True), user) == "irreversible"
    assert tag_for(listed("fetch"), user) == "read"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("read_query", "'read_query', which is not NAME=TAG"),
        ("read_query=readonly", "gives read_query the tag 'readonly'; use one of"),
        ("=read", "'=read', which is not NAME=TAG"),
    ],
)
def test_a_malformed_tag_is_refused_naming_the_item(text: str, message: str) -> None:
    """Fails if a bad `--tools-tag` item is dropped instead of refused."""
    with pytest.raises(KauditError, match=message):
        parse_tool_tags(text)


def test_the_listing_becomes_tools_with_the_server_schema(tmp_path: Path) -> None:
    """Fails if a proxied tool loses the server's schema or description, or its tag."""
    listing = [listed("read_query", read_only_hint=True), listed("write_query")]
    tools = proxied_tools(listing, server(tmp_path), {})
    assert list(tools) == ["read_query", "write_query"]
    assert isinstance(tools["write_query"], ProxiedTool)
    assert tools["read_query"].spec() == {"name": "read_query", "description": "",
                                          "parameters": SCHEMA}  # fmt: skip
    assert [t.tag for t in tools.values()] == ["read", "irreversible"]


@pytest.mark.parametrize(
    ("names", "tags", "message"),
    [
        (["finish"], {}, "a tool named 'finish'"),
        (["q", "q"], {}, r"lists \['q'\] more than once"),
        (["q"], {"read_query": "read"}, r"names \['read_query'\], which the server lacks"),
    ],
)
def test_a_listing_kaudit_cannot_proxy_faithfully_is_refused(
    tmp_path: Path, names: list[str], tags: dict[str, str], message: str
) -> None:
    """Fails if a server's `finish` shadows kaudit's, a duplicate name hides a tool, or a
    tag for a tool the server lacks is silently ignored."""
    with pytest.raises(KauditError, match=message):
        proxied_tools([listed(n) for n in names], server(tmp_path), tags)


def test_the_world_address_fills_the_command_and_a_missing_one_is_refused(tmp_path: Path) -> None:
    """Fails if `{db}`/`{url}` are not replaced inside an argument, or `{url}` passes
    through literally when the world has no URL."""
    world = WorldAddress(tmp_path / "w.sqlite", "sqlite:////x/w.sqlite", tmp_path)
    argv = tools_argv("env --db-path={db} {url}", world)
    assert argv == ["env", f"--db-path={tmp_path / 'w.sqlite'}", "sqlite:////x/w.sqlite"]
    with pytest.raises(KauditError, match=r"\{url\}, which is not available"):
        tools_argv("env {url}", WorldAddress(tmp_path / "w.sqlite", None, tmp_path))


def test_a_server_answer_reaches_the_agent_as_sent() -> None:
    """Fails if an error answer counts as a success, or structured content is dropped."""
    text = [types.TextContent(type="text", text="no such table: x")]
    assert tool_result(types.CallToolResult(content=text, is_error=True)).to_json() == {
        "ok": False,
        "error": "no such table: x",
    }
    structured = types.CallToolResult(content=text, structured_content={"rows": 2})
    assert tool_result(structured).content == {"rows": 2}
    assert tool_result(types.CallToolResult(content=text)).content == "no such table: x"


@pytest.mark.parametrize(
    ("agent", "tools", "message"),
    [
        ("command", {"tools_tag": "read_query=read"}, "`tools_tag` needs `tools_command`"),
        ("command", {"tools_command": "no-such-server {db}"}, "not found: 'no-such-server'"),
        ("command", {"tools_command": "env {db}", "tools_tag": "q"}, "'q', which is not NAME=TAG"),
        ("mcp", {"tools_command": "env {db}"}, "needs `agents` of kind command"),
        ("reference", {"tools_command": "env {db}"}, "`tools_command` needs an external agent"),
    ],
)
def test_tool_door_options_are_checked_before_any_run(
    agent: str, tools: dict[str, str], message: str
) -> None:
    """Fails if a bad tools option is accepted and only fails (or is ignored) per run:
    a tag without a server, a missing program, an MCP agent whose own tools it would hide."""
    task = load_suite("builtin").tasks["billing/payout-ack-lost"]
    command = None if agent == "reference" else "env true"
    with pytest.raises(KauditError, match=message):
        build_agents([agent], [task], agent_command=command, tools=tools)


def test_a_command_agent_gets_one_tool_door_per_run() -> None:
    """Fails if `--tools-command` does not reach the command agent as a door (or its
    manifest), or its factory hands two runs the same door (one run's calls would land
    in the other's)."""
    task = load_suite("builtin").tasks["billing/payout-ack-lost"]
    (agent,) = build_agents(
        ["command"], [task], agent_command="env true", tools={"tools_command": "env {db}"}
    )
    assert isinstance(agent, CommandAgent) and len(agent.doors) == 1
    assert agent.describe()["doors"] == [{"kind": "tools", "command": "env {db}", "tags": {}}]
    world = object()  # the factory does not look at the world: the door does, when opened
    first, second = agent.doors[0](world), agent.doors[0](world)
    assert isinstance(first, ToolDoor) and first is not second
