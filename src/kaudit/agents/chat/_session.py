"""One run's conversation with a chat model: the provider-neutral turn loop with retries."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from kaudit._usage import Usage
from kaudit.agents._protocol import Episode, Observation, ToolCall, Turn
from kaudit.agents.chat._config import ModelConfig
from kaudit.agents.chat._retry import Backoff, Disposition, RateLimiter
from kaudit.errors import AgentError, KauditError


@dataclass(frozen=True)
class Reply:
    """One parsed model reply."""

    content: str | None
    tool_calls: tuple[ToolCall, ...]
    usage: Usage = field(default_factory=Usage)
    """The tokens the reply was billed for (priced by the session)."""


@dataclass
class RunTotals:
    """What a run's API calls cost, kept beside the turns so an errored run still has it."""

    usage: Usage = field(default_factory=Usage)

    def add(self, usage: Usage) -> None:
        """Count calls, retries, time or tokens as they happen."""
        self.usage += usage


class Conversation(Protocol):
    """A provider's message format and error vocabulary for one run."""

    def add_observations(self, observations: Sequence[Observation]) -> None:
        """Append the results of the previous turn's tool calls."""
        ...

    async def create(self) -> Any:
        """Make one API call for the next reply."""
        ...

    def accept(self, response: Any) -> Reply:
        """Parse a response and append it to the history."""
        ...

    def disposition(self, exc: Exception) -> Disposition:
        """What a failed call means."""
        ...

    def retry_after(self, exc: Exception) -> float | None:
        """The server's requested wait, if the error carried one."""
        ...

    def error_kind(self, exc: Exception) -> str:
        """A short name of what failed (`http_500`, `timeout`, …), for stack health."""
        ...


def parse_arguments(raw: str | None) -> dict[str, Any] | str:
    """A JSON object's dict, or the raw string so the harness returns a tool error."""
    text = raw or ""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    return value if isinstance(value, dict) else text


def json_object(value: Any, what: str) -> dict[str, Any]:
    """`value` when it is a JSON object; `TypeError` naming `what` otherwise."""
    if not isinstance(value, dict):
        raise TypeError(f"the {what} is not a JSON object: {str(value)[:80]!r}")
    return value


class ChatSession:
    """Drives one run: observations in, one retried API call, a `Turn` out."""

    def __init__(
        self,
        config: ModelConfig,
        conversation: Conversation,
        totals: RunTotals,
        limiter: RateLimiter,
        seed: int,
    ) -> None:
        self._config = config
        self._conversation = conversation
        self.totals = totals
        self._limiter = limiter
        self._backoff = Backoff(config.backoff_initial_s, config.backoff_max_s, random.Random(seed))

    async def next_turn(self, observations: Sequence[Observation]) -> Turn:
        """The model's next turn; raises `AgentError` once retries are exhausted."""
        self._conversation.add_observations(observations)
        started = time.perf_counter()
        try:
            response, retries = await self._call()
        finally:
            self.totals.add(Usage(model_ms=(time.perf_counter() - started) * 1000))
        return self._turn(response, retries)

    async def _call(self) -> tuple[Any, int]:
        """One API call with its retries; raises `AgentError` once they are spent."""
        retries = 0
        while True:
            await self._limiter.wait()
            self.totals.add(Usage(api_calls=1))
            try:
                return await self._conversation.create(), retries
            except Exception as exc:  # the SDKs' errors; classified by the provider
                kind = self._conversation.disposition(exc)
                if kind == "retry" and retries < self._config.max_retries:
                    retries += 1
                    self.totals.add(Usage(retries=1))
                    await asyncio.sleep(
                        self._backoff.delay(retries, self._conversation.retry_after(exc))
                    )
                    continue
                message = f"{self._config.key}: {type(exc).__name__}: {exc}"
                if kind == "setup":
                    raise KauditError(message) from exc  # a harness error: the run is invalid
                spent = Usage(retries=retries)
                raise AgentError(
                    f"{message} (after {retries} retries)",
                    usage=spent,
                    kind=self._conversation.error_kind(exc),
                ) from exc

    def _turn(self, response: Any, retries: int) -> Turn:
        """Parse one response into a turn and count what it cost."""
        try:
            reply = self._conversation.accept(response)
        except (AttributeError, LookupError, TypeError, ValueError) as exc:
            raise AgentError(
                f"{self._config.key}: unreadable reply: {exc}", kind="unreadable_reply"
            ) from exc
        billed = self._config.price.priced(reply.usage)
        self.totals.add(billed)
        usage = replace(billed, retries=retries)  # the run's retries are counted as they happen
        return Turn(content=reply.content, tool_calls=reply.tool_calls, usage=usage)

    async def aclose(self) -> None:
        """The client is shared by the agent's runs on this event loop; nothing to release."""


def run_headers(episode: Episode) -> dict[str, str]:
    """Headers that let a serving stack's logs (and the test server) tell runs apart."""
    return {"X-Kaudit-Run-Id": episode.run_id, "X-Kaudit-Seed": str(episode.seed)}
