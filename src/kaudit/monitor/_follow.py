"""Tailing a growing event file: yield each complete line as it is appended."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path


def follow_lines(
    path: Path, stop: Callable[[], bool] = lambda: False, poll: float = 0.2
) -> Iterator[str]:
    """Lines of `path`, the existing ones first, then each new one as a writer appends it.

    A line is yielded only once its newline arrives, so a writer caught mid-line is never
    read as a malformed event. Ends when `stop()` returns True at a moment with nothing
    new to read (the CLI ends it with Ctrl-C instead).
    """
    with path.open(encoding="utf-8") as handle:
        pending = ""
        while True:
            chunk = handle.readline()
            if chunk:
                pending += chunk
                if pending.endswith("\n"):
                    yield pending
                    pending = ""
                continue
            if stop():
                return
            time.sleep(poll)
