"""Each API's requests, replies and streams read the same way, however they arrive."""

from __future__ import annotations

import json
from typing import Any

from kaudit.proxy._exchange import SENT_MESSAGES, ProposedCall
from kaudit.proxy._formats import FORMATS
from kaudit.proxy._responses import ResponsesStream, responses_said, responses_sent

RESPONSE: dict[str, Any] = {
    "id": "resp_1",
    "object": "response",
    "output": [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Checking."}],
        },
        {"type": "function_call", "call_id": "fc_1", "name": "get_order", "arguments": '{"id": 3}'},
    ],
    "usage": {"input_tokens": 40, "output_tokens": 9, "total_tokens": 49},
}


def test_responses_reply_reads_text_calls_and_usage() -> None:
    """Bug it catches: a reasoning item taken for text, or `call_id` confused with `id`."""
    said = responses_said(RESPONSE)
    assert said.content == "Checking."
    assert said.tool_calls == (ProposedCall("fc_1", "get_order", {"id": 3}),)
    assert (said.usage.input_tokens, said.usage.output_tokens) == (40, 9)


def test_responses_stream_is_read_from_its_completed_event() -> None:
    """Bug it catches: deltas summed on top of the completed response (text twice)."""
    stream = ResponsesStream()
    stream.event("response.output_text.delta", json.dumps({"delta": "Check"}))
    assert stream.said() is None
    final = {"type": "response.completed", "response": RESPONSE}
    stream.event("response.completed", json.dumps(final))
    assert stream.said() == responses_said(RESPONSE)


def test_responses_request_keeps_what_follows_the_models_last_item() -> None:
    """Bug it catches: the instructions repeated after the first turn, or a function
    call's output not matched to its call."""
    first = responses_sent({"model": "m", "instructions": "Be careful.", "input": "Cancel 3."})
    assert [m["role"] for m in first.messages] == ["system", "user"]
    later = responses_sent(
        {
            "model": "m",
            "instructions": "Be careful.",
            "input": [
                {"role": "user", "content": "Cancel 3."},
                RESPONSE["output"][2],
                {"type": "function_call_output", "call_id": "fc_1", "output": "order 3: open"},
            ],
        }
    )
    assert later.results == {"fc_1": "order 3: open"}
    assert later.messages == ({"role": "tool", "content": "order 3: open", "tool_call_id": "fc_1"},)


def test_a_long_history_records_only_its_last_new_messages() -> None:
    """Bug it catches: an unbounded record of a request that adds many messages at once."""
    many = [{"role": "user", "content": "x" * 5000} for _ in range(SENT_MESSAGES + 5)]
    sent = FORMATS["v1/chat/completions"].sent({"model": "m", "messages": many})
    assert len(sent.messages) == SENT_MESSAGES and sent.dropped == 5
    assert sent.messages[0]["content"].endswith("[1000 more characters cut]")


def test_anthropic_tool_results_are_matched_to_their_calls() -> None:
    """Bug it catches: tool results inside a user message's blocks not found."""
    sent = FORMATS["v1/messages"].sent(
        {
            "model": "m",
            "system": "Be careful.",
            "messages": [
                {"role": "user", "content": "Cancel 3."},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "g"}]},
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t1",
                            "content": [{"type": "text", "text": "open"}],
                        }
                    ],
                },
            ],
        }
    )
    assert sent.results == {"t1": "open"}
    assert [m["role"] for m in sent.messages] == ["user"]  # no system prompt after a reply


def test_malformed_tool_arguments_are_kept_raw() -> None:
    """Bug it catches: a model's broken JSON dropped instead of recorded as it came."""
    body = {
        "choices": [
            {
                "message": {
                    "content": None,
                    "tool_calls": [{"id": "c", "function": {"name": "g", "arguments": "{oops"}}],
                }
            }
        ]
    }
    said = FORMATS["v1/chat/completions"].said(body)
    assert said.content is None and said.tool_calls == (ProposedCall("c", "g", "{oops"),)
    assert (said.usage.input_tokens, said.usage.output_tokens) == (0, 0)
