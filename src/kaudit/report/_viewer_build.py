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
milliseconds, and it opens the ledger read-only on its own connection. Forking is
used only where it is safe and pays: on Linux, with at least two CPUs, from a process
with no other thread (a fork copies no thread, so a lock another thread held would stay
held in the child), and for a ledger of at least `FORK_MIN_RECORDS` records.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import weakref
from multiprocessing.connection import Connection
from pathlib import Path

from kaudit.ledger import Ledger
from kaudit.report._viewer import RunViewer

__all__ = ["FORK_MIN_RECORDS", "ViewerBuild"]

FORK_MIN_RECORDS = 1000
"""Below this many records the viewer costs less than 0.15 s: not worth a process."""


def can_fork() -> bool:
    """Whether this process may fork a viewer builder (see the module's docstring)."""
    return sys.platform == "linux" and (os.cpu_count() or 1) >= 2 and threading.active_count() == 1


def built_viewer(ledger: Path, campaign: str | None, upto: int) -> RunViewer:
    """The packed viewer of the counted runs among records 1 … `upto`, read unverified.

    Its caller has verified (or is verifying) the same records; the viewer only shows them.
    """
    viewer = RunViewer()
    with Ledger(ledger, readonly=True) as store:
        for data, size in store.documents(campaign, upto=upto):
            viewer.add_data(data, size)
    viewer.pack()
    return viewer


def _build(conn: Connection, ledger: Path, campaign: str | None, upto: int) -> None:
    try:
        conn.send(built_viewer(ledger, campaign, upto))
    except BaseException:  # the parent builds the viewer itself; it words any error
        conn.send(None)
    finally:
        conn.close()


class ViewerBuild:
    """A viewer being built by a forked process, of records 1 … `upto` of one ledger."""

    def __init__(
        self, upto: int, process: multiprocessing.process.BaseProcess, conn: Connection
    ) -> None:
        self.upto = upto
        self._conn = conn
        # A report dropped before its page is written stops the builder with it.
        self._stop = weakref.finalize(self, _stop, process, conn)

    @classmethod
    def start(cls, ledger: Path, campaign: str | None) -> ViewerBuild | None:
        """Fork the builder of the ledger's records as they stand; None when not worth it.

        Opening the ledger is the reader's job: a file that is not a ledger gives None
        here and the reader's own error there.
        """
        if not can_fork():
            return None
        try:
            with Ledger(ledger, readonly=True) as store:
                upto = store.head().records
        except Exception:  # the verified read that follows raises the error users see
            return None
        if upto < FORK_MIN_RECORDS:
            return None
        context = multiprocessing.get_context("fork")
        receive, send = context.Pipe(duplex=False)
        process = context.Process(
            target=_build, args=(send, ledger, campaign, upto), daemon=True, name="kaudit-viewer"
        )
        process.start()
        send.close()  # the child's end: once the child exits, a recv() ends rather than hangs
        return cls(upto, process, receive)

    def take(self, upto: int) -> RunViewer | None:
        """The viewer when it read records 1 … `upto`, else None; the process is done after.

        None too when the process failed or died: the caller builds the viewer itself.
        """
        if upto != self.upto:
            self.cancel()
            return None
        try:
            viewer: RunViewer | None = self._conn.recv()
        except (EOFError, OSError):
            viewer = None
        self.cancel()
        return viewer

    def cancel(self) -> None:
        """Stop the process (if it still runs) and release its pipe; later calls do nothing."""
        self._stop()


def _stop(process: multiprocessing.process.BaseProcess, conn: Connection) -> None:
    if process.is_alive():
        process.terminate()
    process.join()
    conn.close()
