"""The Anthropic Messages format: system apart, tool_use blocks out, tool_result blocks in."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anthropic

from kaudit._usage import Usage
from kaudit.agents._protocol import Episode, Observation, ToolCall
from kaudit.agents.chat._body import MessageBody, post
from kaudit.agents.chat._config import ModelConfig
from kaudit.agents.chat._retry import Disposition, SdkErrors
from kaudit.agents.chat._session import Reply, json_object, run_headers
from kaudit.agents.chat._transport import http_client


def make_client(config: ModelConfig) -> anthropic.AsyncAnthropic:
    """A client that never retries by itself, so every retry is ours and counted."""
    return anthropic.AsyncAnthropic(
        api_key=config.api_key(),
        base_url=config.base_url,
        timeout=config.timeout_s,
        max_retries=0,
        http_client=http_client(anthropic, config.http_backend),
    )


SDK = anthropic
"""The SDK module, for its transport options."""

_ERRORS = SdkErrors(
    connection=anthropic.APIConnectionError,
    status=anthropic.APIStatusError,
    base=anthropic.AnthropicError,
    timeout=anthropic.APITimeoutError,
)


class AnthropicConversation:
    """Messages, tools and error handling of one run in the Messages format."""

    def __init__(
        self, client: anthropic.AsyncAnthropic, config: ModelConfig, episode: Episode
    ) -> None:
        self._client = client
        self._config = config
        self._episode = episode
        fields: dict[str, Any] = {
            "model": config.name,
            "system": episode.task.system_prompt,
            "max_tokens": config.max_tokens,
        }
        tools = [
            {"name": s["name"], "description": s["description"], "input_schema": s["parameters"]}
            for s in episode.tool_specs
        ]
        if tools:
            fields["tools"] = tools
            fields["tool_choice"] = {"type": "auto"}  # the API's default, said explicitly
        if config.temperature is not None:
            fields["temperature"] = config.temperature
        if config.top_p is not None:
            fields["top_p"] = config.top_p
        opening = [{"role": "user", "content": episode.task.prompt}]
        self.body = MessageBody(fields | config.extra_body, opening)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation so far, as sent."""
        return self.body.messages

    def add_observations(self, observations: Sequence[Observation]) -> None:
        """All results of one turn go back in a single user message, as the API requires."""
        if not observations:
            return
        blocks = [
            {
                "type": "tool_result",
                "tool_use_id": obs.call.id,
                "content": obs.text,
                "is_error": not obs.ok,
            }
            for obs in observations
        ]
        self.body.append({"role": "user", "content": blocks})

    async def create(self) -> Any:
        """One POST to `/v1/messages` through the client (its auth, errors, parsing).

        `client.post` sends the body as built: no per-call typed-dict transform, and the
        sampling fields recent SDKs dropped from `create()` still reach models that take them.
        """
        return await post(self._client, "/v1/messages", self.body, run_headers(self._episode))

    def accept(self, response: Any) -> Reply:
        """Text blocks joined as the content; tool_use blocks become calls.

        Raises `ValueError` or `TypeError` for a reply that is not a message.
        """
        reply = json_object(response, "reply")
        blocks = reply.get("content")
        if not isinstance(blocks, list):
            raise ValueError("the reply has no content blocks")
        texts: list[str] = []
        calls: list[ToolCall] = []
        echoed: list[dict[str, Any]] = []
        for block in blocks:
            kind = json_object(block, "content block").get("type")
            if kind == "text":
                text = str(block.get("text") or "")
                texts.append(text)
                echoed.append({"type": "text", "text": text})
            elif kind == "tool_use":
                given = block.get("input")
                arguments = given if isinstance(given, dict) else str(given)
                call_id, name = str(block["id"]), str(block["name"])
                calls.append(ToolCall(call_id, name, arguments))
                echoed.append(
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": name,
                        # the API only accepts objects; the tool error tells the model why
                        "input": arguments if isinstance(arguments, dict) else {},
                    }
                )
        self.body.append({"role": "assistant", "content": echoed or ""})
        usage = json_object(reply.get("usage") or {}, "usage")
        input_tokens = sum(
            int(usage.get(name) or 0)
            for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        return Reply(
            content="".join(texts) or None,
            tool_calls=tuple(calls),
            usage=Usage(input_tokens, int(usage.get("output_tokens") or 0)),
        )

    def disposition(self, exc: Exception) -> Disposition:
        """Timeouts, dropped connections, 429, 5xx (529 overloaded included) are retried."""
        return _ERRORS.disposition(exc)

    def retry_after(self, exc: Exception) -> float | None:
        """The Retry-After of a status error."""
        return _ERRORS.retry_after(exc)

    def error_kind(self, exc: Exception) -> str:
        """What failed, named for the stack-health counts (`http_500`, `timeout`, …)."""
        return _ERRORS.kind(exc)
