"""Anthropic Messages (`/v1/messages`) as the proxy reads it."""

from __future__ import annotations

import json
from typing import Any

from kaudit._usage import Usage
from kaudit.proxy._exchange import Said, Sent, proposed_call
from kaudit.proxy._text import as_int, new_messages, recorded_message, text_of

__all__ = ["MessagesStream", "messages_said", "messages_sent"]

_INPUT_COUNTS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
"""Every input token Anthropic bills, cached ones included, as chat agents count them."""


def messages_sent(body: dict[str, Any]) -> Sent:
    """The request's model, stream flag, and messages after the last assistant message.

    The system prompt is recorded with the first request only (before any reply).
    """
    messages = body.get("messages")
    listed = messages if isinstance(messages, list) else []
    new, dropped = new_messages(listed, lambda m: m.get("role") == "assistant")
    recorded: list[dict[str, Any]] = []
    if body.get("system") and not any(
        isinstance(m, dict) and m.get("role") == "assistant" for m in listed
    ):
        recorded.append(recorded_message("system", body["system"]))
    results: dict[str, str] = {}
    for message in new:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                results[str(block.get("tool_use_id"))] = text_of(block.get("content"))
        recorded.append(recorded_message(message.get("role"), content))
    return Sent.of(body, recorded, results, dropped)


def messages_said(body: dict[str, Any]) -> Said:
    """Text blocks joined, tool_use blocks as calls, and the usage.

    Raises `LookupError`, `TypeError` or `AttributeError` for a body that is not a message.
    """
    blocks = body["content"]
    if not isinstance(blocks, list):
        raise TypeError("the reply has no content blocks")
    return _said(blocks, body.get("usage") or {}, {})


def _said(blocks: list[Any], usage: dict[str, Any], raw_inputs: dict[int, str]) -> Said:
    texts, calls = [], []
    for index, block in enumerate(blocks):
        if block.get("type") == "text":
            texts.append(str(block.get("text") or ""))
        elif block.get("type") == "tool_use":
            given = raw_inputs[index] if index in raw_inputs else block.get("input")
            calls.append(proposed_call(block.get("id"), block.get("name"), given))
    return Said(
        content="".join(texts) or None,
        tool_calls=tuple(calls),
        usage=Usage(
            input_tokens=sum(as_int(usage.get(name)) for name in _INPUT_COUNTS),
            output_tokens=as_int(usage.get("output_tokens")),
        ),
    )


class MessagesStream:
    """Reassembles a streamed message from its events: blocks by index, then usage."""

    def __init__(self) -> None:
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}
        self._usage: dict[str, Any] = {}
        self._started = False

    def event(self, name: str | None, data: str) -> None:
        """Take one event; usage counts in later events replace earlier ones (cumulative)."""
        value = json.loads(data)
        kind = value.get("type")
        if kind == "message_start":
            self._started = True
            self._usage.update(value.get("message", {}).get("usage") or {})
        elif kind == "content_block_start":
            index = as_int(value.get("index"))
            self._blocks[index] = dict(value.get("content_block") or {})
        elif kind == "content_block_delta":
            self._delta(as_int(value.get("index")), value.get("delta") or {})
        elif kind == "message_delta":
            self._usage.update({k: v for k, v in (value.get("usage") or {}).items() if v})

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        block = self._blocks.setdefault(index, {"type": "text", "text": ""})
        if delta.get("type") == "text_delta":
            block["text"] = str(block.get("text") or "") + str(delta.get("text") or "")
        elif delta.get("type") == "input_json_delta":
            self._json.setdefault(index, []).append(str(delta.get("partial_json") or ""))

    def said(self) -> Said | None:
        """The reply as a non-streamed one would have said it; None before `message_start`."""
        if not self._started:
            return None
        ordered = [self._blocks[i] for i in sorted(self._blocks)]
        positions = {i: n for n, i in enumerate(sorted(self._blocks))}
        raw = {positions[i]: "".join(parts) for i, parts in self._json.items() if i in positions}
        return _said(ordered, self._usage, raw)
