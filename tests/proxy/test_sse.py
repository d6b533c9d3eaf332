"""Events come out the same however the network cut the stream's bytes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kaudit.agents.chat._sse_replies import sse_events
from kaudit.proxy._sse import EventSplitter

STREAM = b"".join(
    sse_events(
        {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": "bot",
            "content": [{"type": "text", "text": "Déjà vu ✓"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 5, "output_tokens": 3},
        },
        anthropic=True,
        include_usage=True,
    )
)


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=30), st.booleans())
def test_any_chunking_gives_the_same_events(cuts: list[int], crlf: bool) -> None:
    """Bug it catches: an event (or a multi-byte character, or a CRLF pair) cut across
    two chunks lost or split in two."""
    data = STREAM.replace(b"\n", b"\r\n") if crlf else STREAM
    whole = EventSplitter().feed(data)
    splitter = EventSplitter()
    pieces = [event for chunk in _split(data, cuts) for event in splitter.feed(chunk)]
    assert pieces == whole
    assert [name for name, _ in whole][:2] == ["message_start", "content_block_start"]
    assert len(whole) == 7  # start, block start, two deltas, block stop, delta, stop


def test_comments_and_blank_data_are_not_events() -> None:
    """Bug it catches: a keep-alive comment (`: ping`) handed to a reader as an event."""
    assert EventSplitter().feed(b": ping\n\nevent: x\ndata: {}\n\n") == [("x", "{}")]
