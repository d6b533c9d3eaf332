"""The OpenAI Chat Completions format, for OpenAI and every compatible server.

vLLM, Ollama, llama.cpp server, OpenRouter and the like speak this format; what differs
between them goes in the model config (`base_url`, `max_tokens_param`, `extra_body`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from kaudit.agents._protocol import Episode, Observation, ToolCall
from kaudit.agents.chat._config import ModelConfig
from kaudit.agents.chat._retry import Disposition, SdkErrors
from kaudit.agents.chat._session import Reply, parse_arguments, run_headers

_SEED_RANGE = 2**31 - 1  # some compatible servers reject seeds beyond int32


def make_client(config: ModelConfig) -> openai.AsyncOpenAI:
    """A client that never retries by itself, so every retry is ours and counted."""
    return openai.AsyncOpenAI(
        api_key=config.api_key(),
        base_url=config.base_url,
        timeout=config.timeout_s,
        max_retries=0,
    )


_ERRORS = SdkErrors(
    connection=openai.APIConnectionError, status=openai.APIStatusError, base=openai.OpenAIError
)


class OpenAIConversation:
    """Messages, tools and error handling of one run in the Chat Completions format."""

    def __init__(self, client: openai.AsyncOpenAI, config: ModelConfig, episode: Episode) -> None:
        self._client = client
        self._config = config
        self._episode = episode
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": episode.task.system_prompt},
            {"role": "user", "content": episode.task.prompt},
        ]
        self._tools = [{"type": "function", "function": spec} for spec in episode.tool_specs]
        self._turn = 0

    def add_observations(self, observations: Sequence[Observation]) -> None:
        """One `tool` message per result, in call order."""
        for obs in observations:
            self.messages.append({"role": "tool", "tool_call_id": obs.call.id, "content": obs.text})

    async def create(self) -> Any:
        """One POST to `/chat/completions` through the client (its auth, errors, parsing).

        `client.post` is the SDK's documented way to send a raw body; `create()` would walk
        the whole history through its typed-dict transform first (~5 ms of CPU per call),
        which at hundreds of calls a second is most of the harness's budget.
        """
        config = self._config
        body: dict[str, Any] = {
            "model": config.name,
            "messages": self.messages,
            config.max_tokens_param: config.max_tokens,
        }
        if self._tools:
            body["tools"] = self._tools
        if config.temperature is not None:
            body["temperature"] = config.temperature
        if config.top_p is not None:
            body["top_p"] = config.top_p
        if config.send_seed:
            body["seed"] = self._episode.seed % _SEED_RANGE
        return await self._client.post(
            "/chat/completions",
            cast_to=ChatCompletion,
            body=body | config.extra_body,
            options={"headers": run_headers(self._episode)},
        )

    def accept(self, response: Any) -> Reply:
        """Parse the first choice; the raw argument string is echoed back unchanged."""
        if not response.choices:
            raise ValueError("the reply has no choices")
        message = response.choices[0].message
        calls: list[ToolCall] = []
        echoed: list[dict[str, Any]] = []
        for i, item in enumerate(message.tool_calls or []):
            function = getattr(item, "function", None)
            if function is None:
                continue  # custom (non-function) tool calls are never offered
            call_id = item.id or f"call_{self._turn}_{i}"
            raw = function.arguments or ""
            calls.append(ToolCall(call_id, function.name, parse_arguments(raw)))
            echoed.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": function.name, "arguments": raw},
                }
            )
        assistant: dict[str, Any] = {"role": "assistant", "content": message.content}
        if echoed:
            assistant["tool_calls"] = echoed
        self.messages.append(assistant)
        self._turn += 1
        usage = response.usage
        return Reply(
            content=message.content,
            tool_calls=tuple(calls),
            input_tokens=int(usage.prompt_tokens) if usage else 0,
            output_tokens=int(usage.completion_tokens) if usage else 0,
        )

    def disposition(self, exc: Exception) -> Disposition:
        """Timeouts, dropped connections, 429, 5xx (529 overloaded included) are retried."""
        return _ERRORS.disposition(exc)

    def retry_after(self, exc: Exception) -> float | None:
        """The Retry-After of a status error."""
        return _ERRORS.retry_after(exc)
