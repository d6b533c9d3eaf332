"""Blocking library calls that work inside a notebook, whose thread runs an event loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def outside_running_loop(work: Callable[[], T], name: str = "kaudit") -> T:
    """`work()` here, or on a thread of its own when this thread runs an event loop.

    A notebook runs one, and `asyncio.run` refuses to start a second on its thread.
    Whatever `work` opens (a ledger: SQLite connections stay on one thread) it opens
    on the thread that uses it. An exception in `work` is raised here.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return work()
    outcome: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(work())
        except BaseException as exc:  # handed to the caller's thread, raised there
            failure.append(exc)

    thread = threading.Thread(target=target, name=name)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return outcome[0]
