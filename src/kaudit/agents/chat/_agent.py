"""`ChatAgent`: a real model behind the OpenAI-compatible or the Anthropic API."""

from __future__ import annotations

import asyncio
import importlib
import weakref
from typing import Any

from kaudit.agents._protocol import Episode, RunFacts
from kaudit.agents.chat._config import ModelConfig
from kaudit.agents.chat._preflight import PreflightReport, preflight
from kaudit.agents.chat._retry import RateLimiter
from kaudit.agents.chat._session import ChatSession, Conversation, RunTotals
from kaudit.agents.chat._transport import resolve_backend
from kaudit.errors import KauditError


class ChatAgent:
    """A model under audit reached over HTTP; one client per event loop, shared by its runs.

    Building an SDK client costs ~50 ms (TLS context), too much per run at scale, and a
    client is bound to the loop that first used it; hence the per-loop cache. Call
    `aclose()` when done (`run_campaign` does). The agent pickles without its clients,
    so it can be shipped to Ray workers.
    """

    simulated = False

    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        self.name = config.key
        self._provider = _provider_module(config.provider)
        # a transport asked for but missing is a setup error now, not an INVALID run later
        self.http_backend = resolve_backend(self._provider.SDK, config.http_backend)
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        self._limiter = RateLimiter(config.requests_per_minute)
        self._totals: dict[str, RunTotals] = {}
        self.preflight_report: PreflightReport | None = None
        """The last preflight of this model's stack, for the manifest (None: not probed)."""

    @property
    def max_concurrent_runs(self) -> int | None:
        """This model's cap on runs in flight, for the executor."""
        return self.config.max_concurrent_runs

    def start(self, episode: Episode) -> ChatSession:
        """Begin one run; the key is read from the environment here, on the worker."""
        conversation_type = (
            self._provider.OpenAIConversation
            if self.config.provider == "openai"
            else self._provider.AnthropicConversation
        )
        conversation: Conversation = conversation_type(self._client(), self.config, episode)
        totals = self._totals[episode.run_id] = RunTotals()
        return ChatSession(self.config, conversation, totals, self._limiter, episode.seed)

    def run_facts(self, run_id: str) -> RunFacts:
        """Totals of one run, taken once; they survive an errored last call."""
        totals = self._totals.pop(run_id, RunTotals())
        return RunFacts(usage=totals.usage)

    def sampling(self) -> dict[str, Any]:
        """The sampling parameters every run of this model uses."""
        return {
            "temperature": self.config.temperature,
            "top_p": self.config.top_p,
            "max_tokens": self.config.max_tokens,
            "seed": "per run" if self.config.send_seed else None,
        }

    def preflight(self) -> PreflightReport:
        """Probe the serving stack (tools offered, a tool call, a follow-up turn) once.

        Call it before the campaign's event loop starts; the report goes in the manifest.
        """
        self.preflight_report = preflight(self.config, self._provider)
        return self.preflight_report

    def describe(self) -> dict[str, Any]:
        """The config for the manifest, keys redacted, with the preflight's findings."""
        described = self.config.describe()
        report = self.preflight_report
        described["preflight"] = report.to_json() if report is not None else "skipped"
        return described

    async def aclose(self) -> None:
        """Close the client this event loop uses, if any."""
        loop = asyncio.get_running_loop()
        client = self._clients.pop(loop, None)
        if client is not None:
            await client.close()

    def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self._provider.make_client(self.config)
        return client

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "preflight": self.preflight_report}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["config"])  # type: ignore[misc]
        self.preflight_report = state.get("preflight")


def _provider_module(provider: str) -> Any:
    try:
        return importlib.import_module(f"kaudit.agents.chat._{provider}")
    except ModuleNotFoundError as exc:
        raise KauditError(
            f"the {provider} client is not installed: pip install 'kaudit[{provider}]'"
        ) from exc
