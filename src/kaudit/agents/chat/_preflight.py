"""A preflight of the serving stack: prove tool calling works before the first run.

A stack that drops the tools makes every run end clean, and a report of such runs reads
`safe^n 1.000` for a model that never had a tool; a stack that rejects the follow-up turn
makes every run `errored`. Both look like model behaviour in a ledger, so they must be
caught before the first run, not discovered in the numbers.

The probe uses the provider's own conversation class, the same code that builds every
run's requests, so what it proves is what the runs will send:

1. the probe prompt without tools (the key, the model name and the URL; prompt tokens);
2. the same prompt with one tool: the stack must put the tools in the prompt (more prompt
   tokens than step 1, where the server reports usage) and, in a few tries, the model
   should call it;
3. the tool's result sent back, echoing the assistant's tool call exactly as a run echoes
   it: the stack must accept this follow-up turn and answer it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from kaudit.agents._protocol import Episode, Observation, ToolCall
from kaudit.agents.chat._config import ModelConfig
from kaudit.errors import KauditError, PreflightError
from kaudit.spec import Task

PROBE_TOOL: dict[str, Any] = {
    "name": "record_probe",
    "description": "Record the probe value. Call this tool once with the value you are given.",
    "parameters": {
        "type": "object",
        "properties": {"value": {"type": "string", "description": "The value to record."}},
        "required": ["value"],
    },
}
PROBE_SYSTEM = "You are a helpful assistant that uses tools when asked."
PROBE_PROMPT = 'Call the tool record_probe with value "ping". Do not reply with text.'
PROBE_RESULT = '{"recorded": "ping"}'
PROBE_ATTEMPTS = 3
"""Tries at obtaining a real tool call; a small model does not call tools every time."""
PROBE_MAX_TOKENS = 96
"""Enough for one tool call's JSON; keeps a probe of a slow local model to seconds."""


@dataclass
class PreflightReport:
    """What the preflight of one model found, for the campaign manifest."""

    model: str
    base_url: str | None
    ok: bool = False
    failure: str | None = None
    tools_in_prompt: bool | None = None
    """True when usage shows the tools reached the prompt; None when the server says nothing."""
    tool_call_obtained: bool = False
    """Whether the model itself called the probe tool (else the follow-up used a stand-in)."""
    tool_attempts: int = 0
    follow_up_ok: bool = False
    prompt_tokens: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """Plain values for the manifest."""
        return asdict(self)

    def line(self) -> str:
        """One line for the terminal: what failed, where, or that the stack is fine."""
        where = f"model {self.model} at {self.base_url or 'the provider default URL'}"
        if not self.ok:
            return f"preflight failed for {where}: {self.failure}"
        called = (
            "the model called the probe tool"
            if self.tool_call_obtained
            else f"the model made no tool call in {self.tool_attempts} probes "
            "(tools reached the prompt)"
        )
        return f"preflight ok for {where}: {called}; follow-up turn accepted"


def _probe_config(config: ModelConfig) -> ModelConfig:
    """The model's own config, bounded for a probe: few tokens, few retries."""
    return config.model_copy(
        update={
            "max_tokens": min(config.max_tokens, PROBE_MAX_TOKENS),
            "max_retries": min(config.max_retries, 2),
        }
    )


def _episode(tools: bool, attempt: int) -> Episode:
    # A probe is not a task: it needs only the two prompts the conversations read.
    prompts: dict[str, Any] = {"system_prompt": PROBE_SYSTEM, "prompt": PROBE_PROMPT}
    task = Task.model_construct(**prompts)
    specs = (PROBE_TOOL,) if tools else ()
    return Episode(task=task, run_id=f"kaudit-preflight/{attempt}", seed=attempt, tool_specs=specs)


async def _call(conversation: Any, step: str) -> Any:
    """One API call; any failure becomes the preflight's one-line reason."""
    try:
        return await conversation.create()
    except Exception as exc:  # the SDK's errors, named by the provider below
        kind = conversation.error_kind(exc)
        detail = " ".join(str(exc).split())[:300]
        raise PreflightError(f"{step}: {kind}: {detail}") from exc


_ANTHROPIC_PROMPT = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
"""The Messages API's prompt size is their sum: `input_tokens` leaves out what the cache
served, so alone it shrinks to 1 when a server (llama.cpp's) reuses the previous probe's
prefix, and the tools would look dropped."""


def _prompt_tokens(response: Any) -> int | None:
    usage = response.get("usage") if isinstance(response, dict) else None
    if not isinstance(usage, dict):
        return None
    if "prompt_tokens" in usage:
        value = usage["prompt_tokens"]
    else:
        parts = [usage.get(name) for name in _ANTHROPIC_PROMPT]
        value = sum(part for part in parts if isinstance(part, int)) if parts[0] else None
    return int(value) if isinstance(value, int) and value > 0 else None


async def _probe(provider: Any, config: ModelConfig, report: PreflightReport) -> None:
    client = provider.make_client(config)
    start = (
        provider.OpenAIConversation
        if config.provider == "openai"
        else provider.AnthropicConversation
    )
    try:
        bare = start(client, config, _episode(False, 0))
        bare_tokens = _prompt_tokens(await _call(bare, "a request without tools"))
        if bare_tokens is not None:
            report.prompt_tokens["without_tools"] = bare_tokens
        conversation, call = await _obtain_call(
            lambda attempt: start(client, config, _episode(True, attempt)), bare_tokens, report
        )
        if call is None:
            call = _stand_in_call(conversation, config)
        conversation.add_observations([Observation(call=call, ok=True, text=PROBE_RESULT)])
        _accept(conversation, await _call(conversation, "the follow-up turn (a tool result)"))
        report.follow_up_ok = True
    finally:
        await client.close()


async def _obtain_call(
    start: Callable[[int], Any], bare_tokens: int | None, report: PreflightReport
) -> tuple[Any, ToolCall | None]:
    """The probe conversation and the model's tool call (None after every try failed)."""
    conversation: Any = None
    for attempt in range(1, PROBE_ATTEMPTS + 1):
        report.tool_attempts = attempt
        conversation = start(attempt)
        response = await _call(conversation, "a request offering a tool")
        tokens = _prompt_tokens(response)
        if tokens is not None:
            report.prompt_tokens["with_tools"] = tokens
        if bare_tokens is not None and tokens is not None:
            report.tools_in_prompt = tokens > bare_tokens
            if not report.tools_in_prompt:
                raise PreflightError(
                    f"the stack dropped the tools: the prompt has {tokens} tokens with a "
                    f"tool offered and {bare_tokens} without (a server without tool "
                    "calling, or a chat template without tools)"
                )
        reply = _accept(conversation, response)
        if reply.tool_calls:
            report.tool_call_obtained = True
            return conversation, reply.tool_calls[0]
    if report.tools_in_prompt is None:
        raise PreflightError(
            f"no tool call in {PROBE_ATTEMPTS} probes and the server reports no usage, "
            "so kaudit cannot tell whether the tools reached the model"
        )
    return conversation, None


def _accept(conversation: Any, response: Any) -> Any:
    try:
        return conversation.accept(response)
    except (AttributeError, LookupError, TypeError, ValueError) as exc:
        raise PreflightError(f"the reply is not a completion: {exc}") from exc


def _stand_in_call(conversation: Any, config: ModelConfig) -> ToolCall:
    """The tool call a model would have made, appended exactly as a run echoes one.

    Going through `accept` keeps the echoed assistant message the runs' own, so the
    follow-up request tests the form every run sends after a tool call.
    """
    arguments = '{"value": "ping"}'
    if config.provider == "openai":
        function = {"name": PROBE_TOOL["name"], "arguments": arguments}
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_probe", "type": "function", "function": function}],
        }
        response: dict[str, Any] = {"choices": [{"message": message}]}
    else:
        block = {"type": "tool_use", "id": "toolu_probe", "name": PROBE_TOOL["name"]}
        response = {"content": [block | {"input": {"value": "ping"}}]}
    return _accept(conversation, response).tool_calls[0]  # type: ignore[no-any-return]


def preflight(config: ModelConfig, provider: Any) -> PreflightReport:
    """Probe one model's serving stack; the report says whether runs may start.

    Runs its own event loop (the campaign's has not started yet). Never raises for what
    the stack does: a failure is the report's `failure`, for the caller to refuse on.
    """
    report = PreflightReport(model=config.key, base_url=config.base_url)
    started = time.monotonic()
    try:
        config.api_key()  # a missing key is a setup error, named before any request
        asyncio.run(_probe(provider, _probe_config(config), report))
        report.ok = True
    except KauditError as exc:
        report.failure = str(exc)
    report.seconds = round(time.monotonic() - started, 3)
    return report
