"""`kaudit.judge`, the library call `kaudit grade` is a thin layer over."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import kaudit
from kaudit.agents.chat.testserver import ChatTestServer
from kaudit.grade._call import judge_ledger
from kaudit.ledger._grades import read_grades
from tests.grade.conftest import SUITE, grade, judge_yaml


def test_the_call_grades_as_the_command_does_even_inside_an_event_loop(
    ledger_path: Path, judge_server: ChatTestServer, tmp_path: Path
) -> None:
    """Fails if `kaudit.judge` grades other runs, other answers or another judge key than
    `kaudit grade` on the same ledger, if its head does not pin the grades it wrote, or if
    it calls `asyncio.run` on a notebook's running loop."""
    judge = judge_yaml(tmp_path / "j.yaml", judge_server, "reader")
    twin = tmp_path / "twin.sqlite"
    shutil.copyfile(ledger_path, twin)
    shown = grade(twin, judge)
    assert shown.exit_code == 0, shown.output

    async def notebook_cell() -> kaudit.grade.Graded:
        return kaudit.judge(ledger_path, str(judge), suite=SUITE)

    done = asyncio.run(notebook_cell())
    assert kaudit.judge is judge_ledger
    counts = done.summary().split(", judge time")[0]  # the time spent is not repeatable
    assert counts in " ".join(shown.output.split())
    assert (done.result.graded, done.result.failed) == (6, 0)
    assert done.head.grades == 6
    ours, theirs = read_grades(ledger_path), read_grades(twin)
    # Concurrent calls land in any order; what each run got must not differ.
    assert {(g.run_key, g.grade, g.judge_key) for g in ours.grades} == {
        (g.run_key, g.grade, g.judge_key) for g in theirs.grades
    }
