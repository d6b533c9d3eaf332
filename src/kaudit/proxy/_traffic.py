"""One run's model traffic: its exchanges, their totals, and the budget they spend.

The proxy records each call here as it completes; the run's record takes its transcript
(one turn per answered call, shaped as a chat agent's), its final message, tokens, cost
and the API error that ended it from here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from kaudit._usage import Usage
from kaudit.agents import RunFacts
from kaudit.proxy._budget import RunBudget
from kaudit.proxy._exchange import Exchange, cut
from kaudit.proxy._upstream import Upstream

__all__ = ["ModelTraffic"]


class ModelTraffic:
    """The calls of one run, in the order they completed.

    `on_over` is called once, with the reason, when a call takes the run over `budget`.
    """

    def __init__(
        self,
        upstream: Upstream,
        budget: RunBudget | None = None,
        on_over: Callable[[str], None] | None = None,
    ) -> None:
        self._upstream = upstream
        self._budget = budget or RunBudget()
        self._on_over = on_over
        self.exchanges: list[Exchange] = []
        self.usage = Usage()
        """The calls so far: tokens, cost, calls made and their time."""
        self.over_budget: str | None = None
        """Why the run's budget is spent; every later call is refused."""
        self._results: dict[str, str] = {}

    def record(self, exchange: Exchange) -> None:
        """Price and keep one completed call, then check the budget."""
        self._results.update(exchange.sent.results)
        if exchange.said is not None:
            price = self._upstream.price(exchange.sent.model)
            exchange.priced = price is not None
            if price is not None:
                exchange.cost_usd = price.priced(exchange.said.usage).cost_usd
        self.usage += exchange.usage
        self.exchanges.append(exchange)
        if self.over_budget is None:
            reason = self._budget.spent(self.usage.cost_usd, self.usage.tokens)
            if reason is not None:
                self.over_budget = reason
                if self._on_over is not None:
                    self._on_over(reason)

    def turns(self) -> list[dict[str, Any]]:
        """The transcript: each answered call as a turn.

        Each proposed tool call carries the result the agent sent back for it, if it did.
        """
        turns = []
        for exchange in self.exchanges:
            if not exchange.ok:
                continue
            turn = exchange.to_turn()
            for call in turn["tool_calls"]:
                if call["id"] in self._results:
                    call["result"] = {"content": cut(self._results[call["id"]])}
            turns.append(turn)
        return turns

    def final_message(self) -> str | None:
        """The text of the model's last answered reply: what the agent last heard it say."""
        answered = [e for e in self.exchanges if e.ok]
        said = answered[-1].said if answered else None
        return None if said is None else said.content

    def api_error(self) -> str | None:
        """The kind of the upstream failure no answered call came after, if any.

        The same words as a chat agent's `extra.api_error` (`http_500`, `timeout`, …), so
        stack health counts external runs that the serving stack ended.
        """
        for exchange in reversed(self.exchanges):
            if exchange.ok:
                return None
            if exchange.error not in (None, "budget"):
                return exchange.error
        return None

    def facts(self) -> RunFacts:
        """The run's totals as an agent reports them (`Agent.run_facts`)."""
        return RunFacts(usage=self.usage)

    def summary(self) -> dict[str, Any]:
        """What the record's `extra.model_proxy` says beside the totals."""
        models = Counter(str(e.sent.model) for e in self.exchanges)
        unpriced = sorted({str(e.sent.model) for e in self.exchanges if e.said and not e.priced})
        return {
            "upstream": self._upstream.describe()["url"],
            "calls": len(self.exchanges),
            "streamed": sum(e.sent.stream for e in self.exchanges),
            "models": dict(sorted(models.items())),
            "unpriced_models": unpriced,
            "errors": [e.to_error() for e in self.exchanges if not e.ok],
            "over_budget": self.over_budget,
        }
