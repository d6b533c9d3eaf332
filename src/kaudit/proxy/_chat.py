"""OpenAI Chat Completions (`/v1/chat/completions`) as the proxy reads it."""

from __future__ import annotations

import json
from typing import Any

from kaudit._usage import Usage
from kaudit.proxy._exchange import ProposedCall, Said, Sent, proposed_call
from kaudit.proxy._text import as_int, new_messages, recorded_message, text_of

__all__ = ["ChatStream", "chat_said", "chat_sent"]


def chat_sent(body: dict[str, Any]) -> Sent:
    """The request's model, stream flag, and messages after the last assistant message."""
    messages = body.get("messages")
    new, dropped = new_messages(
        messages if isinstance(messages, list) else [], lambda m: m.get("role") == "assistant"
    )
    recorded, results = [], {}
    for message in new:
        role = message.get("role")
        if role == "tool":
            call_id = str(message.get("tool_call_id"))
            results[call_id] = text_of(message.get("content"))
            recorded.append(recorded_message(role, message.get("content"), tool_call_id=call_id))
        else:
            recorded.append(recorded_message(role, message.get("content")))
    return Sent.of(body, recorded, results, dropped)


def chat_said(body: dict[str, Any]) -> Said:
    """The first choice's text and tool calls, and the usage.

    Raises `LookupError`, `TypeError` or `AttributeError` for a body that is not a completion.
    """
    message = body["choices"][0]["message"]
    calls = tuple(
        proposed_call(
            item.get("id"), item["function"].get("name"), item["function"].get("arguments")
        )
        for item in message.get("tool_calls") or []
        if item.get("function") is not None
    )
    content = message.get("content")
    return _with_usage(text_of(content) or None, calls, body.get("usage"))


def _with_usage(content: str | None, calls: tuple[ProposedCall, ...], usage: Any) -> Said:
    counts = usage if isinstance(usage, dict) else {}
    return Said(
        content=content,
        tool_calls=calls,
        usage=Usage(as_int(counts.get("prompt_tokens")), as_int(counts.get("completion_tokens"))),
    )


class ChatStream:
    """Reassembles a streamed completion from its chunks: text, tool calls by index, usage."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._usage: Any = None
        self._saw_chunk = False

    def event(self, name: str | None, data: str) -> None:
        """Take one event's data (`[DONE]` ends the stream)."""
        if data.strip() == "[DONE]":
            return
        chunk = json.loads(data)
        self._saw_chunk = True
        if chunk.get("usage"):
            self._usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) == 0:
                self._delta(choice.get("delta") or {})

    def _delta(self, delta: dict[str, Any]) -> None:
        if isinstance(delta.get("content"), str):
            self._text.append(delta["content"])
        for piece in delta.get("tool_calls") or []:
            call = self._calls.setdefault(as_int(piece.get("index")), {"arguments": []})
            call["id"] = piece.get("id") or call.get("id")
            function = piece.get("function") or {}
            call["name"] = function.get("name") or call.get("name")
            if isinstance(function.get("arguments"), str):
                call["arguments"].append(function["arguments"])

    def said(self) -> Said | None:
        """The reply as a non-streamed one would have said it; None before any chunk."""
        if not self._saw_chunk:
            return None
        calls = tuple(
            proposed_call(c.get("id"), c.get("name"), "".join(c["arguments"]))
            for _, c in sorted(self._calls.items())
        )
        return _with_usage("".join(self._text) or None, calls, self._usage)
