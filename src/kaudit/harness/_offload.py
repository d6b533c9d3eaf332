"""Substrate work that waits on a database server runs off the event loop.

A PostgreSQL clone (`CREATE DATABASE ... TEMPLATE`), dump or drop waits tens to hundreds
of milliseconds on the server; run on the event loop it would stall every other run in
flight, so `--concurrency` would not overlap them. SQLite's in-memory seed and dump take
well under a millisecond, less than a hop to a worker thread is worth, so they stay inline.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from kaudit.substrate import SqliteSubstrate, Substrate

T = TypeVar("T")


def runs_inline(substrate: Substrate) -> bool:
    """Whether `substrate`'s seed, dump and close are quick enough for the event loop."""
    return isinstance(substrate, SqliteSubstrate)


async def off_loop(substrate: Substrate, work: Callable[[], T]) -> T:
    """`work()` in a worker thread, or inline when the substrate `runs_inline`."""
    if runs_inline(substrate):
        return work()
    return await asyncio.to_thread(work)
