"""The model door: one run's proxy, opened before its agent starts, closed after it ends.

The door hands the agent base URLs to its own proxy and placeholder keys, and gives back
what the proxy saw: the model's transcript, the last reply as the run's final message,
tokens, cost, latency, and the upstream failure that ended the run, if one did. When a
call takes the run over its budget, `stop_reason` is set and `stopping` fires, so the
command session can end the agent and record the run `stalled` with the reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

from kaudit.errors import KauditError
from kaudit.proxy._budget import RunBudget
from kaudit.proxy._server import ModelProxy
from kaudit.proxy._traffic import ModelTraffic
from kaudit.proxy._upstream import Upstream, upstream_from
from kaudit.serve._doors import DoorEvidence, HandedWorld

__all__ = ["ModelDoor", "ModelDoorConfig", "model_door"]


@dataclass(frozen=True)
class ModelDoorConfig:
    """What every run's model door is built from: the upstream and the run's budget."""

    upstream: Upstream
    budget: RunBudget = field(default_factory=RunBudget)

    def __call__(self, world: HandedWorld) -> ModelDoor:
        """The run's door (a `DoorFactory`)."""
        return ModelDoor(self.upstream, self.budget)

    def describe(self) -> dict[str, Any]:
        """For the manifest."""
        return {
            "upstream": self.upstream.describe(),
            "max_cost_usd": self.budget.max_cost_usd,
            "max_tokens": self.budget.max_tokens,
        }


def model_door(
    upstream: str | Upstream | None,
    max_cost_usd: float | None = None,
    max_tokens: int | None = None,
) -> ModelDoorConfig | None:
    """Every run's model door from an upstream (a URL, a model config file, or built).

    None without an upstream; a run cap without one is refused, since the proxy is where
    a run's spending is seen.
    """
    if upstream is None:
        if max_cost_usd is not None or max_tokens is not None:
            raise KauditError(
                "a run's cost or token cap is enforced at the model proxy: name the "
                "upstream model server its calls go to"
            )
        return None
    chosen = upstream if isinstance(upstream, Upstream) else upstream_from(upstream)
    return ModelDoorConfig(chosen, RunBudget(max_cost_usd, max_tokens))


class ModelDoor:
    """One run's recording model proxy as a door."""

    def __init__(self, upstream: Upstream, budget: RunBudget | None = None) -> None:
        self.traffic = ModelTraffic(upstream, budget, on_over=self._over)
        self._proxy = ModelProxy(upstream, self.traffic)
        self._stack = AsyncExitStack()
        self.stopping = asyncio.Event()
        """Set once the run's budget is spent: the agent should be ended."""
        self.stop_reason: str | None = None

    def _over(self, reason: str) -> None:
        self.stop_reason = reason
        self.stopping.set()

    def last_message(self) -> str | None:
        """The model's last reply so far: the final message of an agent without `finish`."""
        return self.traffic.final_message()

    async def open(self, world: HandedWorld) -> Mapping[str, str]:
        """Start the run's proxy; the agent's base URLs and placeholder keys."""
        await self._stack.enter_async_context(self._proxy)
        return self._proxy.environment()

    async def close(self) -> DoorEvidence:
        """Stop the proxy (the agent has ended); the model traffic as evidence."""
        await self._stack.aclose()
        return model_evidence(self.traffic)


def model_evidence(traffic: ModelTraffic) -> DoorEvidence:
    """The traffic as the run's evidence: totals, transcript, final message, api error."""
    facts = traffic.facts()
    extra: dict[str, Any] = {"model_proxy": traffic.summary()}
    failed = traffic.api_error()
    if failed is not None:
        extra["api_error"] = failed  # the stack ended the run: stack health counts it
    return DoorEvidence(
        extra=extra,
        usage=facts.usage,
        final_message=traffic.final_message(),
        transcript=traffic.turns(),
        stalled=traffic.over_budget,
    )
