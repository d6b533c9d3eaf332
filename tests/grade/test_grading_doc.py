"""The real grading runs quoted in docs/grading.md are outputs kaudit could print."""

from __future__ import annotations

import pytest

from tests.grade.grading_doc import Measurement, check_output, measurements

SERVERS = ("llama-cpp-python", "llama-server")


def test_the_page_quotes_a_measured_run_on_each_server() -> None:
    """Fails if a measurement's subsection (its commands or its output) goes missing."""
    titles = [m.title for m in measurements()]
    assert all(any(server in title for title in titles) for server in SERVERS), titles


@pytest.mark.parametrize("measured", measurements(), ids=lambda m: m.title.split("`")[1])
def test_each_quoted_grading_output_is_consistent(measured: Measurement) -> None:
    """Fails if a quoted figure was edited by hand or went stale against the code: a share,
    an exact interval, a kappa or its bootstrap interval that kaudit would not compute from
    the row's own counts, a judge row that disagrees with the grade summary above it, or a
    table header kaudit no longer prints. The real-model test runs the llama-server
    commands and checks its own output with the same function."""
    anchored = "llama-server" in measured.title
    check_output(measured.output, anchored=anchored)
    assert any(" grade " in command and "--judge" in command for command in measured.commands)
