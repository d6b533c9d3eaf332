"""One model call seen by the proxy: what the agent sent, what the model said, what it cost.

Chat APIs are stateless, so every request repeats the whole conversation; recording each
request whole would grow with the square of the turns. An exchange keeps only what is new
in its request (the messages after the model's last reply: tool results, a user's
follow-up) and the reply, each message's text cut at `MESSAGE_CHARS`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from kaudit._usage import Usage
from kaudit.agents.chat._session import parse_arguments

__all__ = [
    "MESSAGE_CHARS",
    "SENT_MESSAGES",
    "Api",
    "Exchange",
    "ProposedCall",
    "Said",
    "Sent",
    "cut",
    "proposed_call",
]

Api = Literal["chat", "messages", "responses"]
"""OpenAI Chat Completions, Anthropic Messages, OpenAI Responses."""

MESSAGE_CHARS = 4000
"""A recorded message or tool result longer than this is cut (and says so)."""

REPLY_CHARS = 20000
"""A model reply's text is kept up to this length: it may be the run's final message."""

SENT_MESSAGES = 20
"""At most this many new messages of one request are recorded (the last ones)."""


def cut(text: str, limit: int = MESSAGE_CHARS) -> str:
    """`text` up to `limit` characters, saying how many were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[{len(text) - limit} more characters cut]"


@dataclass(frozen=True)
class ProposedCall:
    """A tool call the model proposed; `arguments` is the raw string when it is not JSON."""

    id: str
    name: str
    arguments: dict[str, Any] | str

    def to_json(self) -> dict[str, Any]:
        """The transcript's form of a tool call, as a chat agent's turns have it."""
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


def proposed_call(call_id: Any, name: Any, arguments: Any) -> ProposedCall:
    """A proposed call from a reply's fields; an object argument is kept as is."""
    given = arguments if isinstance(arguments, dict) else parse_arguments(str(arguments or ""))
    return ProposedCall(str(call_id or ""), str(name or ""), given)


@dataclass(frozen=True)
class Sent:
    """What one request asked: its model, whether it streams, and what is new in it."""

    model: str | None
    stream: bool
    messages: tuple[dict[str, Any], ...] = ()
    """The messages after the model's last reply, each `{role, content}` with text cut."""
    results: dict[str, str] = field(default_factory=dict)
    """Tool results the agent sends back, by the id of the call they answer."""
    dropped: int = 0
    """New messages beyond `SENT_MESSAGES`, not recorded."""

    @classmethod
    def of(
        cls,
        body: dict[str, Any],
        messages: list[dict[str, Any]],
        results: dict[str, str],
        dropped: int,
    ) -> Sent:
        """What a request `body` asked, with its new messages as the API's reader found them."""
        model = body.get("model")
        return cls(
            model=None if model is None else str(model),
            stream=bool(body.get("stream")),
            messages=tuple(messages),
            results=results,
            dropped=dropped,
        )


@dataclass(frozen=True)
class Said:
    """What the model replied: text, proposed tool calls, and the tokens it billed."""

    content: str | None = None
    tool_calls: tuple[ProposedCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    """The reply's tokens only: the traffic prices them and counts the call."""


@dataclass
class Exchange:
    """One request through the proxy, recorded whether or not the upstream answered."""

    api: Api
    sent: Sent
    status: int | None = None
    """The upstream's HTTP status; None when it never answered."""
    said: Said | None = None
    """The parsed reply; None for an error or a reply that could not be read."""
    error: str | None = None
    """What failed, in chat agents' `api_error` words: `http_500`, `timeout`, `connection`,
    `unreadable_reply`; `budget` when the proxy refused the call itself."""
    cost_usd: float = 0.0
    priced: bool = False
    """Whether the model had a price; an unpriced call costs 0 and says so."""
    latency_ms: float = 0.0
    """From the request's arrival to the reply's last byte sent on."""

    @property
    def ok(self) -> bool:
        """Whether the model answered with a reply that was read."""
        return self.said is not None and self.error is None

    @property
    def usage(self) -> Usage:
        """The call as the run counts it: tokens, cost, latency, and one call made.

        A call the proxy refused itself (`budget`) never reached the model: no call.
        """
        said = self.said or Said()
        called = Usage(api_calls=int(self.error != "budget"), model_ms=self.latency_ms)
        return replace(said.usage, cost_usd=self.cost_usd) + called

    def to_turn(self) -> dict[str, Any]:
        """The transcript turn, shaped as a chat agent's, plus what the proxy measured."""
        said = self.said or Said()
        return {
            "content": None if said.content is None else cut(said.content, REPLY_CHARS),
            "tool_calls": [call.to_json() for call in said.tool_calls],
            "stalled": False,
            "model": self.sent.model,
            "sent": list(self.sent.messages),
            "input_tokens": said.usage.input_tokens,
            "output_tokens": said.usage.output_tokens,
            "cost_usd": self.cost_usd,
            "latency_ms": round(self.latency_ms, 3),
        }

    def to_error(self) -> dict[str, Any]:
        """The record of a failed call: which model, what failed, how long it took."""
        return {
            "model": self.sent.model,
            "error": self.error,
            "status": self.status,
            "latency_ms": round(self.latency_ms, 3),
        }
