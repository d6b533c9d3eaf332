"""The run viewer of a large ledger, built by a second process while the first verifies it.

Of a 10,000-run `kaudit report --html`, about 1.5 s go to the run viewer (each record's
JSON parsed, its diff and turns written, each cell compressed) and about 2 s to
verifying the chain and counting; neither needs the other until the page is written, and
every machine kaudit targets has a second core. So `read_report(..., viewer=True)`
forks one process that builds the viewer of the records as they stand, and
`Report.write_html` takes it only if it holds exactly the records the verified read
counted: records 1 … N of the same chain, N the verified count (or the anchor's). When
they differ (a run appended between the two reads, an anchor that pins fewer records,
the process lost), the page builds its viewer in process as it would without one.

The second process is a fork: it inherits the imported modules, so it starts in
milliseconds, and it opens the ledger read-only on its own connection. It reads the
records in one read transaction and sends back the stored hash of record N beside the
viewer, so a viewer of another file (one swapped in during the read) is refused too.
Forking is used only where it is safe and pays: on Linux, with at least two usable
CPUs, from a process that is not itself a daemonic worker and runs no other Python
thread (a fork copies no thread, so a lock another thread held would stay held in the
child; numpy's BLAS pool is idle and the child never calls it), and for a ledger of at
least `FORK_MIN_RECORDS` records. The child takes the default SIGTERM and SIGINT
actions (a parent's own handlers must not keep it alive) and exits if its parent dies.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import weakref
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, NoReturn

from kaudit.ledger import record_hash
from kaudit.ledger._anchor import GENESIS
from kaudit.ledger._parse import record_data
from kaudit.ledger._snapshot import open_rows
from kaudit.report._viewer import RunViewer

__all__ = ["FORK_MIN_RECORDS", "ViewerBuild"]

FORK_MIN_RECORDS = 1000
"""Below this many records the viewer costs less than 0.15 s: not worth a process."""

WAIT_S = 120.0
"""How long a page waits for the builder before building its viewer itself."""

_PR_SET_PDEATHSIG = 1


def can_fork() -> bool:
    """Whether this process may fork a viewer builder (see the module's docstring)."""
    return (
        sys.platform == "linux"
        and len(os.sched_getaffinity(0)) >= 2
        and threading.active_count() == 1
        and not multiprocessing.current_process().daemon
    )


Built = tuple[RunViewer, str | None, tuple[tuple[int, str], ...]]
"""A forked build's result: the packed viewer, record upto's stored hash, and each shown
row's `seq` with the chain hash of its body as read (over its stored predecessor's)."""


def built_viewer(ledger: Path, campaign: str | None, upto: int) -> Built:
    """The packed viewer of the counted runs of records 1 … `upto`, upto's hash, each row's.

    All read unverified, in one read transaction. Its caller verifies the same records
    and takes the viewer only if upto's hash and every shown row's hash are the ones it
    verified: a row edited in place (its stored hashes kept) is never shown.
    """
    viewer = RunViewer()
    hashes: list[tuple[int, str]] = []
    with open_rows(ledger) as store, store.snapshot():
        head = store.stored_hash(upto)
        for seq, body in store.checked_bodies(campaign, False, upto, ()):
            prev = GENESIS if seq == 1 else store.stored_hash(seq - 1)
            viewer.add_data(record_data(ledger, seq, body), len(body))
            hashes.append((seq, record_hash(prev or "", body)))
    viewer.pack()
    return viewer, head, tuple(hashes)


def _build(
    conn: Connection, parent_end: Connection, ledger: Path, campaign: str | None, upto: int
) -> None:
    parent_end.close()  # else the pipe outlives a dead parent and a send never fails
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    with contextlib.suppress(OSError, AttributeError):  # without it, a dead parent
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # still breaks the pipe
    try:
        result: Any = built_viewer(ledger, campaign, upto)
    except BaseException:  # the parent builds the viewer itself; it words any error
        result = None
    try:
        conn.send(result)
    except OSError:  # the parent is gone or stopped waiting
        pass
    finally:
        conn.close()


class ViewerBuild:
    """A viewer being built by a forked process, of records 1 … `upto` of one ledger.

    It holds a process and a pipe, so it is never copied: a copy of a `Report` shares it,
    and pickling one is refused.
    """

    def __init__(
        self, upto: int, process: multiprocessing.process.BaseProcess, conn: Connection
    ) -> None:
        self.upto = upto
        self._conn = conn
        # A report dropped before its page is written stops the builder with it.
        self._stop = weakref.finalize(self, _stop, process, conn)

    def __copy__(self) -> ViewerBuild:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ViewerBuild:
        return self

    def __reduce__(self) -> NoReturn:
        raise TypeError("a ViewerBuild holds a process and cannot be pickled")

    @classmethod
    def start(cls, ledger: Path, campaign: str | None) -> ViewerBuild | None:
        """Fork the builder of the ledger's records as they stand; None when not worth it.

        Opening the ledger is the reader's job: a file that is not a ledger gives None
        here and the reader's own error there.
        """
        if not can_fork():
            return None
        try:
            with open_rows(ledger) as store:
                upto = store.head().records
        except Exception:  # the verified read that follows raises the error users see
            return None
        if upto < FORK_MIN_RECORDS:
            return None
        context = multiprocessing.get_context("fork")
        receive, send = context.Pipe(duplex=False)
        process = context.Process(
            target=_build,
            args=(send, receive, ledger, campaign, upto),
            daemon=True,
            name="kaudit-viewer",
        )
        try:
            process.start()
        except (OSError, AssertionError):  # no process to be had: build in process
            receive.close()
            send.close()
            return None
        send.close()  # the child's end: once the child exits, a recv() ends rather than hangs
        return cls(upto, process, receive)

    def take(self, upto: int | None, head: str | None, hashes: Sequence[bytes]) -> RunViewer | None:
        """The viewer if it read the verified records: 1 … `upto`, upto's hash `head`.

        And each row it shows must hash to `hashes[seq - 1]` (the verified read's).

        Else None, and None too when the process failed, died or took longer than
        `WAIT_S`: the caller builds the viewer itself. The process is done after.
        """
        result: Any = None
        if upto == self.upto and head is not None:
            try:
                if self._conn.poll(WAIT_S):
                    result = self._conn.recv()
            except (EOFError, OSError):
                result = None
        self.cancel()
        if result is None:
            return None
        viewer: RunViewer
        viewer, read_head, shown = result
        if read_head != head or not _same_rows(shown, hashes):
            return None
        return viewer

    def cancel(self) -> None:
        """Stop the process (if it still runs) and release its pipe; later calls do nothing."""
        self._stop()


def _same_rows(shown: Sequence[tuple[int, str]], hashes: Sequence[bytes]) -> bool:
    """Whether each row the builder showed hashes to what the verified read computed."""
    return all(0 < seq <= len(hashes) and hashes[seq - 1] == h.encode() for seq, h in shown)


def _stop(process: multiprocessing.process.BaseProcess, conn: Connection) -> None:
    if process.is_alive():
        process.kill()
    process.join(10)
    conn.close()
