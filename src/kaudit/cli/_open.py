"""The first step of every reader command: open the ledger once, as `kaudit.open` does.

A reader command is open -> call -> render: it opens the ledger here (read-only, its
physical form, chains and anchor checked once), hands the snapshot to the library call,
and renders the result while the snapshot is still open (a page's run viewer reads the
verified records through it). The library call never opens the file again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kaudit.errors import LedgerError
from kaudit.ledger import Anchor, Snapshot, parse_anchor
from kaudit.ledger._sign import load_public_key

__all__ = ["opened", "opened_for_gate"]


@contextmanager
def opened(
    ledger: str | Path,
    head: str | Anchor | None = None,
    pubkey: str | Path | None = None,
    *,
    no_verify: bool = False,
) -> Iterator[Snapshot]:
    """The ledger's one verified read (`kaudit.open`); `LedgerError` names its first problem."""
    from kaudit import open as open_ledger

    with open_ledger(ledger, head=head, pubkey=pubkey, verify=not no_verify) as snapshot:
        yield snapshot


@contextmanager
def opened_for_gate(
    ledger: str | Path, head: str | None, pubkey: Path | None
) -> Iterator[Snapshot]:
    """The gate's read: a ledger that fails its check is still read, and denied on it.

    A malformed `--head` or an unreadable `--pubkey` is the caller's mistake, not
    evidence, so it raises before the ledger is opened instead of becoming a denial.
    """
    from kaudit import open as open_ledger

    anchor = None if head is None else parse_anchor(head)
    if pubkey is not None:
        if anchor is None:
            raise LedgerError("--pubkey needs --head: a signature is checked on an anchor")
        load_public_key(pubkey)
    with open_ledger(ledger, head=anchor, pubkey=pubkey, lenient=True) as snapshot:
        yield snapshot
