"""Server-sent events read off a byte stream that is passed on untouched.

The proxy forwards a stream's bytes as they arrive and reads a copy here; the events are
split however the network cut the bytes, so one event may span chunks and one chunk
may hold many events.
"""

from __future__ import annotations

__all__ = ["Event", "EventSplitter"]

Event = tuple[str | None, str]
"""(event name or None, the data lines joined by newlines)."""


class EventSplitter:
    """Feeds of bytes in, whole events out; a partial event waits for its next bytes."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[Event]:
        """The events completed by `chunk`, in order."""
        self._buffer = (self._buffer + chunk).replace(b"\r\n", b"\n")
        *blocks, self._buffer = self._buffer.split(b"\n\n")
        return [event for block in blocks if (event := _event(block)) is not None]


def _event(block: bytes) -> Event | None:
    name: str | None = None
    data: list[str] = []
    for line in block.decode("utf-8", errors="replace").split("\n"):
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    return (name, "\n".join(data)) if data else None
