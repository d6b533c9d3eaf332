"""Request bodies: the history is encoded once per message, each run keeps its own."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kaudit.agents.chat._body import MessageBody
from kaudit.agents.chat._openai import OpenAIConversation
from kaudit.agents.chat.testserver import ChatTestServer
from kaudit.harness import CampaignPlan, run_campaign
from kaudit.harness._executor import LocalExecutor
from kaudit.ledger import Ledger, RunRecord
from kaudit.suites import Suite
from tests.agents.chat.conftest import agent_for
from tests.agents.chat.personas import mixture

SCALAR = st.none() | st.booleans() | st.integers() | st.text()
JSON = st.recursive(
    SCALAR | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
MESSAGES = st.lists(st.dictionaries(st.text(), JSON, max_size=4), max_size=5)
FIELDS = st.dictionaries(st.text().filter(lambda key: key != "messages"), JSON, max_size=4)


@given(fields=FIELDS, opening=MESSAGES, later=MESSAGES)
def test_the_encoded_body_reads_back_as_the_dict_it_replaces(
    fields: dict[str, Any], opening: list[dict[str, Any]], later: list[dict[str, Any]]
) -> None:
    """Fails if the joined bytes are not the JSON of the body: a separator lost when there
    are no fixed fields (tried: always joining the tail with a comma), a message encoded
    twice or dropped."""
    body = MessageBody(fields, opening)
    for message in later:
        body.append(message)
    expected = {"messages": opening + later, **fields}
    assert json.loads(body.content()) == expected == body.as_dict()
    assert body.messages == opening + later


def test_fixed_fields_may_not_carry_a_history() -> None:
    """A second `messages` key would be sent beside the history (JSON keeps the last)."""
    with pytest.raises(ValueError, match="messages"):
        MessageBody({"messages": []}, [])
    with pytest.raises(ValueError, match="not JSON compliant"):
        MessageBody({}, [{"content": float("nan")}])


@pytest.fixture(scope="module")
def recording_server() -> Iterator[ChatTestServer]:
    with ChatTestServer({"mixture": mixture()}, keep_bodies=True) as server:
        yield server


def test_runs_sharing_one_client_each_send_only_their_own_history(
    recording_server: ChatTestServer, mini_suite: Suite, tmp_path: Path
) -> None:
    """Eight runs at once over the agent's one client: what the server saw from each run is
    exactly that run's conversation.

    Fails if a history leaks between runs (a body cached per task or per agent instead of
    per run: tried by reusing the previous run's `MessageBody` in `ChatAgent.start`), or if
    a run's fixed fields (its seed) are taken from another run.
    """
    agent = agent_for(recording_server, "openai", "mixture")
    with Ledger(tmp_path / "l.sqlite") as ledger:
        asyncio.run(
            run_campaign(
                CampaignPlan("c", k=16, seed=5), mini_suite, [agent], ledger,
                executor=LocalExecutor(8),
            )
        )  # fmt: skip
        records = list(ledger.records())
    assert len({r.final_message for r in records}) > 1  # the runs followed different scripts
    for record in records:
        assert_history_is_the_runs_own(record, recording_server.stats.bodies[key(record)])


def key(record: RunRecord) -> str:
    return record.key.run_id


def assert_history_is_the_runs_own(record: RunRecord, bodies: list[dict[str, Any]]) -> None:
    assert len(bodies) == record.steps
    assert {body["seed"] for body in bodies} == {record.seed % (2**31 - 1)}
    for turn, body in enumerate(bodies):
        messages = body["messages"]
        assert [m["role"] for m in messages[:2]] == ["system", "user"]
        said = [m for m in messages if m["role"] == "assistant"]
        assert len(said) == turn
        for sent, kept in zip(said, record.transcript, strict=False):
            calls = [c["function"]["name"] for c in sent.get("tool_calls", [])]
            assert calls == [c["name"] for c in kept["tool_calls"]]
        if turn:
            previous = bodies[turn - 1]["messages"]
            assert messages[: len(previous)] == previous


def test_a_reply_that_is_not_a_completion_is_refused(
    recording_server: ChatTestServer, mini_suite: Suite
) -> None:
    """Fails if a malformed reply is read as an empty turn instead of raising the errors the
    session turns into an `errored` run (tried: `.get` defaults for a missing message), or
    if arguments some servers send as an object are stringified as Python (tried: `str`)."""
    agent = agent_for(recording_server, "openai", "mixture")
    task = next(iter(mini_suite.tasks.values()))
    from kaudit.agents import Episode

    conversation = OpenAIConversation(None, agent.config, Episode(task, "r", 1, ()))  # type: ignore[arg-type]
    for reply, error in (
        ("<html>", TypeError),
        ({"choices": []}, ValueError),
        ({"choices": [{"message": "hi"}]}, TypeError),
        ({"choices": [{}]}, TypeError),
        ({"choices": [{"message": {"tool_calls": ["x"]}}]}, TypeError),
    ):
        with pytest.raises(error):
            conversation.accept(reply)
    turn = conversation.accept({"choices": [{"message": {"content": "done"}}]})
    assert (turn.content, turn.tool_calls, turn.usage.input_tokens) == ("done", (), 0)
    as_object = {"id": "c1", "function": {"name": "get_account", "arguments": {"account_id": 1}}}
    turn = conversation.accept({"choices": [{"message": {"tool_calls": [as_object]}}]})
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("get_account", {"account_id": 1})]
    assert conversation.messages[-1]["tool_calls"][0]["function"]["arguments"] == '{"account_id":1}'
