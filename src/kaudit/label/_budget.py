"""What one check's SQL may spend: SQLite steps, seconds and value size.

A check is untrusted SQL that runs after every run. An unbounded recursive CTE never
returns and a 100M-row scan takes tens of seconds per run, so each check runs under
SQLite's progress handler: past its step budget (deterministic: the same SQL on the same
state stops at the same place on any machine) or its time budget (a backstop for a slow
machine), or when the process is interrupted, SQLite aborts the statement. Values are
capped too: `randomblob(2000000000)` would otherwise allocate gigabytes.
"""

from __future__ import annotations

# `_signal` holds the C functions `signal.signal` and `getsignal` wrap: the wrappers turn
# each handler into an enum member and back, raising and catching a ValueError for every
# function handler (10 us a check against 0.6 us). Handlers here are SIG_DFL, SIG_IGN or
# callables, so the plain ints the C functions give for the first two are restored as is.
import _signal  # type: ignore[import-not-found]
import asyncio
import signal
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any

PROGRESS_EVERY = 10_000
"""SQLite VM instructions between two calls of the progress handler."""

_interrupted = threading.Event()


def interrupt_checks() -> None:
    """Abort every check now running and every later one (a Ctrl-C handler calls this)."""
    _interrupted.set()


def checks_interrupted() -> bool:
    """Whether `interrupt_checks` was called (and not `resume_checks` since)."""
    return _interrupted.is_set()


def interruption() -> BaseException:
    """What an interrupted check raises: what Ctrl-C would have raised at that point.

    Inside a running event loop asyncio's Ctrl-C handler has already cancelled the main
    task, so the check ends its own task as cancelled and the campaign unwinds the way
    any Ctrl-C unwinds it; elsewhere it is a KeyboardInterrupt.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return KeyboardInterrupt()
    return asyncio.CancelledError()


def resume_checks() -> None:
    """Let checks run again after `interrupt_checks` (for a process that carries on)."""
    _interrupted.clear()


@dataclass(frozen=True)
class CheckBudget:
    """Limits on one check's SQL; a check past any of them makes its run INVALID."""

    steps: int = 20_000_000
    """SQLite VM instructions (a few per row visited; a built-in check takes thousands)."""
    seconds: float = 10.0
    """Wall-clock seconds."""
    value_bytes: int = 64 * 1024 * 1024
    """Largest string or blob the SQL may build or read."""


DEFAULT_CHECK_BUDGET = CheckBudget()


class Meter:
    """The progress handler: counts steps, watches the clock and the interrupt flag."""

    def __init__(self, budget: CheckBudget) -> None:
        self.budget = budget
        self.calls_left = max(1, budget.steps // PROGRESS_EVERY)
        self.deadline = time.monotonic() + budget.seconds
        self.stopped: str | None = None
        """Why the statement was aborted: 'interrupted', or the budget it exceeded."""

    def __call__(self) -> int:
        self.calls_left -= 1
        if _interrupted.is_set():
            self.stopped = "interrupted"
        elif self.calls_left < 0:
            self.stopped = f"its budget of {self.budget.steps:,} SQLite steps"
        elif time.monotonic() > self.deadline:
            self.stopped = f"its budget of {self.budget.seconds:g} seconds"
        return 1 if self.stopped else 0


@contextmanager
def metered(conn: sqlite3.Connection, budget: CheckBudget) -> Iterator[Meter]:
    """`conn` under `budget` while the block runs; a Ctrl-C meanwhile aborts its statement.

    In the main thread SIGINT also sets the interrupt flag before the previous handler
    runs: asyncio's own handler only cancels a task, which cannot run while a statement
    holds the event loop.
    """
    meter = Meter(budget)
    conn.set_progress_handler(meter, PROGRESS_EVERY)
    length = conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, budget.value_bytes)
    try:
        with _sigint_interrupts():
            yield meter
    finally:
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, length)
        conn.set_progress_handler(None, 0)


@contextmanager
def _sigint_interrupts() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; the budgets still bound the check
        return
    previous = _signal.getsignal(signal.SIGINT)
    if previous is None:  # a handler not installed from Python: leave it alone
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> Any:
        interrupt_checks()
        if callable(previous):
            return previous(signum, frame)
        return None

    _signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        _signal.signal(signal.SIGINT, previous)
