"""Tailing a growing file yields whole lines only."""

from __future__ import annotations

from pathlib import Path

from kaudit.monitor._follow import follow_lines


def test_a_line_caught_mid_write_is_yielded_once_complete(tmp_path: Path) -> None:
    """The writer has written half a line when the reader reaches the end; the reader must
    wait for the rest instead of yielding a fragment (which would be a malformed event).
    Fails if `follow_lines` yielded 'par' on its own."""
    path = tmp_path / "events.jsonl"
    path.write_text("first\npar")
    calls = []

    def stop() -> bool:
        calls.append(1)
        if len(calls) == 1:  # the reader is idle at 'par': the writer finishes the line
            with path.open("a") as handle:
                handle.write("tial\nlast\n")
            return False
        return True

    assert list(follow_lines(path, stop, poll=0)) == ["first\n", "partial\n", "last\n"]
    assert len(calls) == 2
