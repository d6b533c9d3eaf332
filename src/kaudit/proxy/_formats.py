"""The APIs the proxy records, by the path the agent posts to."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from kaudit.proxy._chat import ChatStream, chat_said, chat_sent
from kaudit.proxy._exchange import Api, Said, Sent
from kaudit.proxy._messages import MessagesStream, messages_said, messages_sent
from kaudit.proxy._responses import ResponsesStream, responses_said, responses_sent

__all__ = ["FORMATS", "ApiFormat", "StreamReader", "provider_of"]

Provider = Literal["openai", "anthropic"]


class StreamReader(Protocol):
    """Reassembles a streamed reply from its events."""

    def event(self, name: str | None, data: str) -> None:
        """Take one event (raises `ValueError` for data that is not JSON)."""
        ...

    def said(self) -> Said | None:
        """The reply so far as a whole one; None when the stream held none."""
        ...


@dataclass(frozen=True)
class ApiFormat:
    """How one API's requests, replies and streams read, and how it words an error."""

    api: Api
    provider: Provider
    sent: Callable[[dict[str, Any]], Sent]
    said: Callable[[dict[str, Any]], Said]
    stream: Callable[[], StreamReader]

    def error_body(self, kind: str, message: str) -> dict[str, Any]:
        """An error the agent's SDK reads as this provider's own."""
        if self.provider == "anthropic":
            return {"type": "error", "error": {"type": kind, "message": message}}
        return {"error": {"message": message, "type": kind, "code": kind}}


FORMATS: dict[str, ApiFormat] = {
    "v1/chat/completions": ApiFormat("chat", "openai", chat_sent, chat_said, ChatStream),
    "v1/messages": ApiFormat("messages", "anthropic", messages_sent, messages_said, MessagesStream),
    "v1/responses": ApiFormat(
        "responses", "openai", responses_sent, responses_said, ResponsesStream
    ),
}
"""Recorded paths (after the run's prefix); any other path is forwarded unrecorded."""


def provider_of(path: str, headers: Any) -> Provider:
    """Whose key an unrecorded path needs: Anthropic's when the agent speaks its dialect."""
    known = FORMATS.get(path)
    if known is not None:
        return known.provider
    return "anthropic" if "anthropic-version" in headers or "x-api-key" in headers else "openai"
