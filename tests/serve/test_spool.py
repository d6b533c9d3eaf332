"""A served run that finishes while another process holds its ledger is never lost."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from kaudit.ledger import Ledger, verify_ledger
from kaudit.ledger._spool import RunSpooled, drain_spool, spooled_runs
from kaudit.serve import ServeOptions
from kaudit.serve._serve import append_served, open_served
from kaudit.suites import load_suite
from tests.serve.test_mcp_serve import TASK, finished_run

HOLDER = (
    "import sys\n"
    "from kaudit.ledger import Ledger\n"
    "ledger = Ledger(sys.argv[1])\n"
    "with ledger.writer_lock():\n"
    "    print('held', flush=True)\n"
    "    sys.stdin.readline()\n"
    "ledger.close()\n"
)


@contextmanager
def held_by_another_process(ledger: Path) -> Iterator[subprocess.Popen[str]]:
    """A second Python process holding the ledger's writer lock until its stdin closes."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(ledger)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        release(holder)


def release(holder: subprocess.Popen[str]) -> None:
    if holder.poll() is None:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    if holder.stdout is not None:
        holder.stdout.close()


def test_a_run_locked_out_past_the_wait_is_spooled_then_appended_by_the_next_serve(
    tmp_path: Path,
) -> None:
    """Fails if a served run whose ledger another process holds past the wait is dropped
    (the old "another kaudit process is writing this ledger" exit), or if the next serve
    does not append the spooled run, or appends it twice."""
    suite = load_suite("builtin")
    ledger = tmp_path / "mcp.sqlite"
    open_served(ledger, suite, suite.tasks[TASK], ServeOptions())
    result = asyncio.run(finished_run(suite))
    with held_by_another_process(ledger):
        try:
            append_served(ledger, suite, result, ServeOptions(), wait_s=0.2)
        except RunSpooled as spooled:
            assert spooled.path.is_file()
            assert "is appended by the next writer of" in str(spooled)
        else:
            raise AssertionError("the lock was held: the run cannot have been appended")
        [waiting] = spooled_runs(ledger)
    with Ledger(ledger, readonly=True) as opened:
        assert list(opened.records()) == []
    open_served(ledger, suite, suite.tasks[TASK], ServeOptions())  # the next serve drains
    open_served(ledger, suite, suite.tasks[TASK], ServeOptions())  # and a second adds nothing
    with Ledger(ledger, readonly=True) as opened:
        [record] = list(opened.records())
    assert (record.model, record.run_index, record.sub_label) == ("mcp:probe", 0, "completed_clean")
    assert record.extra["served"]["spool"] == waiting.spool_id
    assert spooled_runs(ledger) == []
    assert verify_ledger(ledger).records == 1


def test_a_run_waits_for_another_process_to_let_go_of_the_ledger(tmp_path: Path) -> None:
    """Fails if the served run gives up at once while a second process holds the ledger,
    instead of waiting for it to let go and then appending."""
    suite = load_suite("builtin")
    ledger = tmp_path / "mcp.sqlite"
    result = asyncio.run(finished_run(suite))
    appended: list[object] = []
    with held_by_another_process(ledger) as holder:
        worker = threading.Thread(
            target=lambda: appended.append(append_served(ledger, suite, result, ServeOptions()))
        )
        worker.start()
        while not spooled_runs(ledger):  # the run is on disk and waiting for the lock
            worker.join(0.05)
            assert worker.is_alive(), "append_served returned while the lock was held"
        release(holder)
        worker.join(60)
    [record] = appended
    with Ledger(ledger, readonly=True) as opened:
        assert [r.run_index for r in opened.records()] == [0]
    assert spooled_runs(ledger) == []
    assert record is not None


def test_a_run_appended_before_a_kill_is_not_appended_again(tmp_path: Path) -> None:
    """Fails if a spool entry whose append committed (the process killed before removing
    the file) is appended a second time by the next drain."""
    suite = load_suite("builtin")
    ledger = tmp_path / "mcp.sqlite"
    result = asyncio.run(finished_run(suite))
    record = append_served(ledger, suite, result, ServeOptions())
    spool = ledger.with_name(ledger.name + ".spool")
    entry = spool / f"{record.extra['served']['spool']}.json"
    # What a kill between the commit and the unlink leaves: the entry, spooled again.
    from kaudit.ledger._spool import spool_run

    again = spool_run(ledger, result.record, result.final_image, {})
    again.path.rename(entry)
    entry.write_text(entry.read_text().replace(again.spool_id, entry.stem))
    open_served(ledger, suite, suite.tasks[TASK], ServeOptions())
    with Ledger(ledger, readonly=True) as opened:
        assert len(list(opened.records())) == 1
    assert spooled_runs(ledger) == []


def test_a_run_another_serve_drained_first_is_still_returned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails if two serves ending together lose track of a run: the first to get the lock
    appends both spooled runs, and the second then finds its own entry gone (KeyError)."""
    from kaudit.serve import _serve

    suite = load_suite("builtin")
    ledger = tmp_path / "mcp.sqlite"
    first = append_served(ledger, suite, asyncio.run(finished_run(suite)), ServeOptions())
    real_spool = _serve.spool_run

    def spooled_then_drained_by_another_serve(*args: Any) -> Any:
        spooled = real_spool(*args)
        with Ledger(ledger) as store:
            drain_spool(store)
        return spooled

    monkeypatch.setattr(_serve, "spool_run", spooled_then_drained_by_another_serve)
    second = append_served(ledger, suite, asyncio.run(finished_run(suite)), ServeOptions())
    assert (first.run_index, second.run_index) == (0, 1)
    with Ledger(ledger, readonly=True) as store:
        assert [r.run_index for r in store.records()] == [0, 1]
    assert spooled_runs(ledger) == []
