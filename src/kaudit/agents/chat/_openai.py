"""The OpenAI Chat Completions format, for OpenAI and every compatible server.

vLLM, Ollama, llama.cpp server, OpenRouter and the like speak this format; what differs
between them goes in the model config (`base_url`, `max_tokens_param`, `extra_body`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import openai

from kaudit._usage import Usage
from kaudit.agents._protocol import Episode, Observation, ToolCall
from kaudit.agents.chat._body import MessageBody, encode, post
from kaudit.agents.chat._config import ModelConfig
from kaudit.agents.chat._retry import Disposition, SdkErrors
from kaudit.agents.chat._session import Reply, json_object, parse_arguments, run_headers
from kaudit.agents.chat._transport import http_client

_SEED_RANGE = 2**31 - 1  # some compatible servers reject seeds beyond int32


def make_client(config: ModelConfig) -> openai.AsyncOpenAI:
    """A client that never retries by itself, so every retry is ours and counted."""
    return openai.AsyncOpenAI(
        api_key=config.api_key(),
        base_url=config.base_url,
        timeout=config.timeout_s,
        max_retries=0,
        http_client=http_client(openai, config.http_backend),
    )


SDK = openai
"""The SDK module, for its transport options."""

_ERRORS = SdkErrors(
    connection=openai.APIConnectionError,
    status=openai.APIStatusError,
    base=openai.OpenAIError,
    timeout=openai.APITimeoutError,
)


class OpenAIConversation:
    """Messages, tools and error handling of one run in the Chat Completions format."""

    def __init__(self, client: openai.AsyncOpenAI, config: ModelConfig, episode: Episode) -> None:
        self._client = client
        self._config = config
        self._episode = episode
        fields: dict[str, Any] = {"model": config.name, config.max_tokens_param: config.max_tokens}
        if episode.tool_specs:
            fields["tools"] = [{"type": "function", "function": s} for s in episode.tool_specs]
            # Said explicitly: llama-cpp-python's server ignores `tools` without it (the
            # prompt is the same with and without them), and OpenAI's default is this.
            fields["tool_choice"] = "auto"
        if config.temperature is not None:
            fields["temperature"] = config.temperature
        if config.top_p is not None:
            fields["top_p"] = config.top_p
        if config.send_seed:
            fields["seed"] = episode.seed % _SEED_RANGE
        opening = [
            {"role": "system", "content": episode.task.system_prompt},
            {"role": "user", "content": episode.task.prompt},
        ]
        self.body = MessageBody(fields | config.extra_body, opening)
        self._turn = 0

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation so far, as sent."""
        return self.body.messages

    def add_observations(self, observations: Sequence[Observation]) -> None:
        """One `tool` message per result, in call order."""
        for obs in observations:
            self.body.append({"role": "tool", "tool_call_id": obs.call.id, "content": obs.text})

    async def create(self) -> Any:
        """One POST to `/chat/completions` through the client (its auth, errors, retries).

        `client.post` is the SDK's documented way to send a raw body; `create()` would walk
        the whole history through its typed-dict transform first (~5 ms of CPU per call),
        which at hundreds of calls a second is most of the harness's budget.
        """
        return await post(self._client, "/chat/completions", self.body, run_headers(self._episode))

    def accept(self, response: Any) -> Reply:
        """Parse the first choice; the raw argument string is echoed back unchanged.

        Raises `ValueError` or `TypeError` for a reply that is not a completion.
        """
        choices = json_object(response, "reply").get("choices")
        if not choices or not isinstance(choices, list):
            raise ValueError("the reply has no choices")
        message = json_object(json_object(choices[0], "choice").get("message"), "message")
        content = message.get("content")
        calls: list[ToolCall] = []
        echoed: list[dict[str, Any]] = []
        for i, item in enumerate(message.get("tool_calls") or []):
            function = json_object(item, "tool call").get("function")
            if function is None:
                continue  # custom (non-function) tool calls are never offered
            function = json_object(function, "tool call function")
            call_id = str(item.get("id") or f"call_{self._turn}_{i}")
            name, raw = str(function.get("name") or ""), function.get("arguments") or ""
            if isinstance(raw, dict):  # some compatible servers send the object itself
                raw = encode(raw).decode()
            calls.append(ToolCall(call_id, name, parse_arguments(str(raw))))
            echoed.append(
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}
            )
        # A string, never null: llama-cpp-python's server rejects `"content": null` with
        # HTTP 500 on every follow-up turn; OpenAI, vLLM, Ollama and llama-server take "".
        assistant: dict[str, Any] = {"role": "assistant", "content": content or ""}
        if echoed:
            assistant["tool_calls"] = echoed
        self.body.append(assistant)
        self._turn += 1
        usage = response.get("usage") or {}
        return Reply(
            content=None if content is None else str(content),
            tool_calls=tuple(calls),
            usage=Usage(
                input_tokens=int(usage.get("prompt_tokens") or 0),
                output_tokens=int(usage.get("completion_tokens") or 0),
            ),
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
