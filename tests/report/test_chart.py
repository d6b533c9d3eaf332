"""The chart pieces: round ticks, their labels, text widths and a view that holds all text."""

from __future__ import annotations

import itertools
import re

from hypothesis import given
from hypothesis import strategies as st

from kaudit.report._chart import Canvas, nice_ticks, text_width, tick_text


def test_ticks_are_round_and_labelled_with_the_decimals_their_step_needs() -> None:
    """Bug caught: ticks at 0, 3.5, 7 (a step of raw span / n), or labels "0.2000" and
    "200000" where the axis needs "0.2" and "200,000"."""
    assert nice_ticks(0, 28, 8) == [0, 5, 10, 15, 20, 25]
    assert nice_ticks(0, 1, 5) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    ticks = nice_ticks(0, 0.9, 4)
    assert ticks == [0, 0.25, 0.5, 0.75] and tick_text(0.25, ticks) == "0.25"
    big = nice_ticks(0, 736_840, 5)
    assert [tick_text(t, big) for t in big] == ["0", "200,000", "400,000", "600,000"]


@given(st.floats(-1e4, 1e4), st.floats(1e-3, 1e6), st.integers(2, 10))
def test_ticks_lie_in_the_range_evenly_spaced_and_few(low: float, span: float, most: int) -> None:
    """Bug caught: a tick past either end of the axis, or dozens of ticks on a long one."""
    ticks = nice_ticks(low, low + span, most)
    assert 1 <= len(ticks) <= 2 * most + 1
    assert all(low - span * 1e-6 <= t <= low + span * (1 + 1e-6) for t in ticks)
    steps = [b - a for a, b in itertools.pairwise(ticks)]
    assert all(abs(s - steps[0]) <= 1e-6 * span for s in steps)


def test_text_is_measured_with_dejavu_sans_widths() -> None:
    """Bug caught: a width per character that ignores the font (an "m" as narrow as an
    "i"), or a combining mark (the hat of p̂) counted as a letter."""
    assert text_width("i", 10) == 2.78 and text_width("m", 10) == 9.74
    assert text_width("p̂", 10) == text_width("p", 10)


def test_the_view_grows_to_hold_text_turned_past_the_canvas_edge() -> None:
    """Bug caught: a turned x tick label at the left edge cut off ("mulated:reference" once
    showed for simulated:reference), or a label past the right edge."""
    canvas = Canvas(100, 50)
    canvas.text(10, 40, "simulated:reference", 10, "end", -15)
    canvas.text(95, 10, "800,000", 10, "middle")
    view = re.search(r'viewBox="([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+)"', canvas.svg())
    assert view is not None
    left, _, width, _ = map(float, view.groups())
    assert left <= 10 - text_width("simulated:reference", 10) * 0.96
    assert left + width >= 95 + text_width("800,000", 10) / 2
