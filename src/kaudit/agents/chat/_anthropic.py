"""The Anthropic Messages format: system apart, tool_use blocks out, tool_result blocks in."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anthropic
from anthropic.types import Message

from kaudit.agents._protocol import Episode, Observation, ToolCall
from kaudit.agents.chat._config import ModelConfig
from kaudit.agents.chat._retry import Disposition, SdkErrors
from kaudit.agents.chat._session import Reply, run_headers


def make_client(config: ModelConfig) -> anthropic.AsyncAnthropic:
    """A client that never retries by itself, so every retry is ours and counted."""
    return anthropic.AsyncAnthropic(
        api_key=config.api_key(),
        base_url=config.base_url,
        timeout=config.timeout_s,
        max_retries=0,
    )


_ERRORS = SdkErrors(
    connection=anthropic.APIConnectionError,
    status=anthropic.APIStatusError,
    base=anthropic.AnthropicError,
)


class AnthropicConversation:
    """Messages, tools and error handling of one run in the Messages format."""

    def __init__(
        self, client: anthropic.AsyncAnthropic, config: ModelConfig, episode: Episode
    ) -> None:
        self._client = client
        self._config = config
        self._episode = episode
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": episode.task.prompt}]
        self._tools = [
            {"name": s["name"], "description": s["description"], "input_schema": s["parameters"]}
            for s in episode.tool_specs
        ]

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
        self.messages.append({"role": "user", "content": blocks})

    async def create(self) -> Any:
        """One POST to `/v1/messages` through the client (its auth, errors, parsing).

        `client.post` sends the body as built: no per-call typed-dict transform, and the
        sampling fields recent SDKs dropped from `create()` still reach models that take them.
        """
        config = self._config
        body: dict[str, Any] = {
            "model": config.name,
            "system": self._episode.task.system_prompt,
            "messages": self.messages,
            "max_tokens": config.max_tokens,
        }
        if self._tools:
            body["tools"] = self._tools
        if config.temperature is not None:
            body["temperature"] = config.temperature
        if config.top_p is not None:
            body["top_p"] = config.top_p
        return await self._client.post(
            "/v1/messages",
            cast_to=Message,
            body=body | config.extra_body,
            options={"headers": run_headers(self._episode)},
        )

    def accept(self, response: Any) -> Reply:
        """Text blocks joined as the content; tool_use blocks become calls."""
        texts: list[str] = []
        calls: list[ToolCall] = []
        echoed: list[dict[str, Any]] = []
        for block in response.content:
            if block.type == "text":
                texts.append(block.text)
                echoed.append({"type": "text", "text": block.text})
            elif block.type == "tool_use":
                arguments = block.input if isinstance(block.input, dict) else str(block.input)
                calls.append(ToolCall(block.id, block.name, arguments))
                echoed.append(
                    {
                        "type": "tool_use",
                        "id": block.id,
                        "name": block.name,
                        # the API only accepts objects; the tool error tells the model why
                        "input": arguments if isinstance(arguments, dict) else {},
                    }
                )
        self.messages.append({"role": "assistant", "content": echoed or ""})
        usage = response.usage
        input_tokens = int(usage.input_tokens or 0) + sum(
            int(getattr(usage, name, 0) or 0)
            for name in ("cache_creation_input_tokens", "cache_read_input_tokens")
        )
        return Reply(
            content="".join(texts) or None,
            tool_calls=tuple(calls),
            input_tokens=input_tokens,
            output_tokens=int(usage.output_tokens or 0),
        )

    def disposition(self, exc: Exception) -> Disposition:
        """Timeouts, dropped connections, 429, 5xx (529 overloaded included) are retried."""
        return _ERRORS.disposition(exc)

    def retry_after(self, exc: Exception) -> float | None:
        """The Retry-After of a status error."""
        return _ERRORS.retry_after(exc)
