"""Plain text out of the providers' message contents, for the recorded transcript."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from kaudit.proxy._exchange import SENT_MESSAGES, cut

__all__ = ["as_int", "new_messages", "recorded_message", "text_of"]


def text_of(content: Any) -> str:
    """A content's text: a string as is, blocks joined (non-text blocks named), else JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_block_text(block) for block in content)
    return json.dumps(content, default=str)


def _block_text(block: Any) -> str:
    if not isinstance(block, dict):
        return str(block)
    if isinstance(block.get("text"), str):
        return str(block["text"])
    kind = block.get("type")
    if kind == "tool_result":
        return text_of(block.get("content"))
    if kind == "tool_use":
        return f"[tool_use {block.get('name')}]"
    return f"[{kind}]"


def recorded_message(role: Any, content: Any, **more: Any) -> dict[str, Any]:
    """`{role, content}` with the text cut, plus `more` (a tool call id)."""
    return {"role": str(role), "content": cut(text_of(content))} | more


def new_messages(
    messages: Sequence[Any], is_reply: Callable[[dict[str, Any]], bool]
) -> tuple[list[dict[str, Any]], int]:
    """The messages after the model's last reply, and how many were beyond the limit.

    Only the last `SENT_MESSAGES` are returned.
    """
    items = [m for m in messages if isinstance(m, dict)]
    start = 0
    for index, message in enumerate(items):
        if is_reply(message):
            start = index + 1
    new = items[start:]
    return new[-SENT_MESSAGES:], max(0, len(new) - SENT_MESSAGES)


def as_int(value: Any) -> int:
    """A usage count as an int; absent or malformed counts are 0."""
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0
