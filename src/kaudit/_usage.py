"""What model calls cost, as one value from a turn to the ledger and the judge's grades."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Usage"]


@dataclass(frozen=True)
class Usage:
    """Tokens, dollars at the configured prices, API calls, retries and time in the API.

    One value travels from where calls are counted (a chat agent's turn, a proxy's
    exchange, a judge's reply) to the run record, the grade record and a campaign's
    totals, instead of six numbers copied field by field. `Usage()` is zero and `+` sums
    two; a source leaves at zero what it does not count (a turn counts no calls of its
    own, a proxy sees no retries).

    Attributes:
        input_tokens: Prompt tokens (cache writes and reads included).
        output_tokens: Completion tokens.
        cost_usd: Dollars at the configured prices (0 for an unpriced model).
        retries: API calls retried after a retryable failure.
        api_calls: API calls made, retries included.
        model_ms: Wall time spent awaiting the API, in milliseconds.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    retries: int = 0
    api_calls: int = 0
    model_ms: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        """Both counts together, field by field (left operand's cost first, as summed)."""
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            retries=self.retries + other.retries,
            api_calls=self.api_calls + other.api_calls,
            model_ms=self.model_ms + other.model_ms,
        )

    @property
    def tokens(self) -> int:
        """Input and output tokens together: what a token budget counts."""
        return self.input_tokens + self.output_tokens
