"""A complete scripted reply cut into the server-sent events a streaming API sends.

The test server's streaming mode: the same reply as its non-streaming answer, split the
way the providers split theirs (text and tool arguments in several deltas, usage at the
end), so a client or a proxy that reassembles a stream is tested against the pieces it
meets in the field. Standard library only, like the server.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["responses_events", "responses_turn", "sse_events"]


def sse_events(reply: dict[str, Any], *, anthropic: bool, include_usage: bool) -> list[bytes]:
    """The events of `reply` (a full Chat Completions or Messages body), each as bytes.

    `include_usage` is the OpenAI request's `stream_options.include_usage`: a last chunk
    with empty `choices` carries the usage. Anthropic streams always carry usage.
    """
    return _anthropic_events(reply) if anthropic else _openai_events(reply, include_usage)


def _halves(text: str) -> list[str]:
    middle = len(text) // 2
    return [part for part in (text[:middle], text[middle:]) if part]


def _data(value: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(value, separators=(",", ":")).encode() + b"\n\n"


def _openai_events(reply: dict[str, Any], include_usage: bool) -> list[bytes]:
    choice = reply["choices"][0]
    message = choice["message"]
    head = {"id": reply["id"], "object": "chat.completion.chunk", "created": 0}
    head["model"] = reply["model"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _data(head | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": part}) for part in _halves(message.get("content") or "")]
    for i, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        opening = {"index": i, "id": call["id"], "type": "function"}
        opening["function"] = {"name": function["name"], "arguments": ""}
        events.append(chunk({"tool_calls": [opening]}))
        events += [
            chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]})
            for part in _halves(function["arguments"])
        ]
    events.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        events.append(_data(head | {"choices": [], "usage": reply["usage"]}))
    return [*events, b"data: [DONE]\n\n"]


def _event(name: str, value: dict[str, Any]) -> bytes:
    return f"event: {name}\n".encode() + _data({"type": name} | value)


def _anthropic_events(reply: dict[str, Any]) -> list[bytes]:
    usage = reply["usage"]
    start = {key: value for key, value in reply.items() if key != "content"}
    start |= {"content": [], "stop_reason": None, "usage": usage | {"output_tokens": 1}}
    events = [_event("message_start", {"message": start})]
    for index, block in enumerate(reply["content"]):
        if block["type"] == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": part} for part in _halves(block["text"])]
        else:
            opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            raw = block["input"] if isinstance(block["input"], str) else json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": part} for part in _halves(raw)]
        events.append(_event("content_block_start", {"index": index, "content_block": opening}))
        events += [_event("content_block_delta", {"index": index, "delta": d}) for d in deltas]
        events.append(_event("content_block_stop", {"index": index}))
    ending = {"stop_reason": reply["stop_reason"], "stop_sequence": None}
    closing = {"delta": ending, "usage": {"output_tokens": usage["output_tokens"]}}
    events.append(_event("message_delta", closing))
    return [*events, _event("message_stop", {})]


def responses_events(reply: dict[str, Any]) -> list[bytes]:
    """A Responses API reply as its stream, in the order OpenAI sends one.

    Each output item is opened, filled in deltas and closed; `response.completed` then
    carries the whole response.
    """
    started = reply | {"status": "in_progress", "output": [], "usage": None}
    events = [("response.created", {"response": started})]
    for index, item in enumerate(reply["output"]):
        events += _item_events(index, item)
    events.append(("response.completed", {"response": reply}))
    return [_event(name, {"sequence_number": n} | value) for n, (name, value) in enumerate(events)]


def _item_events(index: int, item: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    at = {"item_id": item["id"], "output_index": index}
    if item["type"] == "function_call":
        opened = item | {"arguments": "", "status": "in_progress"}
        deltas = [
            ("response.function_call_arguments.delta", at | {"delta": part})
            for part in _halves(item["arguments"])
        ]
        done = ("response.function_call_arguments.done", at | {"arguments": item["arguments"]})
        return [
            ("response.output_item.added", {"output_index": index, "item": opened}),
            *deltas,
            done,
            ("response.output_item.done", {"output_index": index, "item": item}),
        ]
    part = item["content"][0]
    in_part = at | {"content_index": 0}
    return [
        ("response.output_item.added", {"output_index": index, "item": item | {"content": []}}),
        ("response.content_part.added", in_part | {"part": part | {"text": ""}}),
        *[
            ("response.output_text.delta", in_part | {"delta": piece})
            for piece in _halves(part["text"])
        ],
        ("response.output_text.done", in_part | {"text": part["text"]}),
        ("response.content_part.done", in_part | {"part": part}),
        ("response.output_item.done", {"output_index": index, "item": item}),
    ]


def responses_turn(given: Any) -> int:
    """Which turn a Responses request is at: the model's replies in its input so far.

    A reply's items (a message, function calls) stand together, so each run of model items
    is one reply.
    """
    turns, in_reply = 0, False
    for item in given if isinstance(given, list) else []:
        mine = isinstance(item, dict) and (
            item.get("type") == "function_call" or item.get("role") == "assistant"
        )
        turns += mine and not in_reply
        in_reply = bool(mine)
    return turns
