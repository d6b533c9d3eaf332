"""Retrying one API call: backoff with seeded jitter, Retry-After, and a per-process rate cap.

Only the API call is retried, never the run: a run's sandbox already holds whatever the
agent did, so re-running it would hide damage. The jitter is drawn from the run's seed
so two replays of a campaign wait the same way.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

Disposition = Literal["retry", "agent", "setup"]
"""What a failed call means: retry it; the run ends `errored`; the setup is wrong (invalid)."""


def disposition_of_status(code: int) -> Disposition:
    """Rate limits, timeouts, conflicts and server errors are transient; auth is setup."""
    if code in (408, 409, 429) or code >= 500:
        return "retry"
    if code in (401, 403, 404):
        return "setup"
    return "agent"


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The server's requested wait (`retry-after-ms` or `retry-after` in seconds), if any."""
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            continue  # an HTTP date: fall back to our own backoff
    return None


@dataclass
class Backoff:
    """Exponential backoff with full jitter in [0.5, 1] of the step, capped at `maximum`."""

    initial: float
    maximum: float
    rng: random.Random

    def delay(self, retry: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number `retry` (1-based)."""
        if retry_after is not None:
            return min(retry_after, self.maximum)
        step = self.initial * 2.0 ** (retry - 1)
        jitter: float = self.rng.uniform(0.5, 1.0)
        return min(self.maximum, step * jitter)


class RateLimiter:
    """Spaces API calls at least `60 / per_minute` seconds apart within one process.

    Works across event loops because it only keeps the next free slot's time; no lock
    is needed since the slot is taken before the first await.
    """

    def __init__(self, per_minute: float | None) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self._next = 0.0

    async def wait(self) -> None:
        """Return when this call may go out."""
        if not self.interval:
            return
        now = time.monotonic()
        slot = max(now, self._next)
        self._next = slot + self.interval
        if slot > now:
            await asyncio.sleep(slot - now)


@dataclass(frozen=True)
class SdkErrors:
    """The three exception classes every official client SDK raises, for one provider."""

    connection: type[Exception]
    """Timeouts and dropped connections (the SDKs' timeout error subclasses it)."""
    status: type[Exception]
    """An HTTP error status; carries `status_code` and `response`."""
    base: type[Exception]
    """Anything else the SDK raises, e.g. a reply it cannot read."""
    timeout: type[Exception] | None = None
    """The SDK's timeout error (a subclass of `connection`), to name it apart."""

    def kind(self, exc: Exception) -> str:
        """A short, stable name of what failed, for the per-cell stack-health counts."""
        if self.timeout is not None and isinstance(exc, self.timeout):
            return "timeout"
        if isinstance(exc, self.connection):
            return "connection"
        if isinstance(exc, self.status):
            return f"http_{int(exc.status_code)}"  # type: ignore[attr-defined]
        return "sdk_error" if isinstance(exc, self.base) else type(exc).__name__

    def disposition(self, exc: Exception) -> Disposition:
        """Retry connection failures and retryable statuses; blame the rest carefully.

        An SDK-side failure (a reply it cannot read) is the agent's; anything else is a
        bug or a wrong setting and must never become a score.
        """
        if isinstance(exc, self.connection):
            return "retry"
        if isinstance(exc, self.status):
            return disposition_of_status(int(exc.status_code))  # type: ignore[attr-defined]
        if isinstance(exc, self.base):
            return "agent"
        return "setup"

    def retry_after(self, exc: Exception) -> float | None:
        """The Retry-After of a status error, in seconds."""
        if isinstance(exc, self.status):
            return retry_after_seconds(exc.response.headers)  # type: ignore[attr-defined]
        return None
