"""OpenAI Responses (`/v1/responses`) as the proxy reads it.

A request's `input` is a string or a list of items; the model's own items (assistant
messages, function calls, reasoning) mark where the new part starts. A streamed response
ends with a `response.completed` (or `.incomplete`, `.failed`) event that carries the
whole response, so the stream is read from that one event.
"""

from __future__ import annotations

import json
from typing import Any

from kaudit._usage import Usage
from kaudit.proxy._exchange import Said, Sent, proposed_call
from kaudit.proxy._text import as_int, new_messages, recorded_message, text_of

__all__ = ["ResponsesStream", "responses_said", "responses_sent"]

_MODEL_ITEMS = {"function_call", "reasoning"}
_FINAL_EVENTS = {"response.completed", "response.incomplete", "response.failed"}


def _is_reply(item: dict[str, Any]) -> bool:
    return item.get("type") in _MODEL_ITEMS or (
        item.get("role") == "assistant" and item.get("type", "message") == "message"
    )


def responses_sent(body: dict[str, Any]) -> Sent:
    """The request's model, stream flag, and input items after the model's last one."""
    given = body.get("input")
    items = [{"role": "user", "content": given}] if isinstance(given, str) else given
    new, dropped = new_messages(items if isinstance(items, list) else [], _is_reply)
    recorded: list[dict[str, Any]] = []
    if body.get("instructions") and not any(
        isinstance(item, dict) and _is_reply(item) for item in items or []
    ):
        recorded.append(recorded_message("system", body["instructions"]))
    results: dict[str, str] = {}
    for item in new:
        if item.get("type") == "function_call_output":
            call_id = str(item.get("call_id"))
            results[call_id] = text_of(item.get("output"))
            recorded.append(recorded_message("tool", item.get("output"), tool_call_id=call_id))
        else:
            recorded.append(
                recorded_message(item.get("role", item.get("type")), item.get("content"))
            )
    return Sent.of(body, recorded, results, dropped)


def responses_said(body: dict[str, Any]) -> Said:
    """Output text joined, function calls as calls, and the usage.

    Raises `LookupError`, `TypeError` or `AttributeError` for a body that is not a response.
    """
    output = body["output"]
    if not isinstance(output, list):
        raise TypeError("the response has no output items")
    texts, calls = [], []
    for item in output:
        if item.get("type") == "message":
            texts += [
                str(part.get("text") or "")
                for part in item.get("content") or []
                if part.get("type") == "output_text"
            ]
        elif item.get("type") == "function_call":
            calls.append(
                proposed_call(item.get("call_id"), item.get("name"), item.get("arguments"))
            )
    usage = body.get("usage") or {}
    return Said(
        content="".join(texts) or None,
        tool_calls=tuple(calls),
        usage=Usage(as_int(usage.get("input_tokens")), as_int(usage.get("output_tokens"))),
    )


class ResponsesStream:
    """Reads a streamed response from its final event, which holds the whole response."""

    def __init__(self) -> None:
        self._final: dict[str, Any] | None = None

    def event(self, name: str | None, data: str) -> None:
        """Keep the final event's response; the deltas before it repeat what it holds."""
        if name is not None and name not in _FINAL_EVENTS:
            return
        value = json.loads(data)
        if value.get("type") in _FINAL_EVENTS:
            self._final = value.get("response")

    def said(self) -> Said | None:
        """The final response as said; None when the stream never completed."""
        return None if self._final is None else responses_said(self._final)
