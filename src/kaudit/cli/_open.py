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

from kaudit.cli._flags import in_flags
from kaudit.errors import KauditError, LedgerError
from kaudit.ledger import Anchor, Snapshot
from kaudit.ledger._anchor import parse_anchor
from kaudit.ledger._sign import load_public_key

__all__ = ["needs_head", "opened", "opened_for_gate"]


def needs_head(head: object, anchored_prefix: bool) -> None:
    """Refuse `--anchored-prefix` without `--head`: there is no anchored prefix to read."""
    if anchored_prefix and head is None:
        raise KauditError("--anchored-prefix needs --head: it reads what an anchor pins")


@contextmanager
def opened(
    ledger: str | Path,
    head: str | Anchor | None = None,
    pubkey: str | Path | None = None,
    *,
    no_verify: bool = False,
    anchored_prefix: bool = False,
) -> Iterator[Snapshot]:
    """The ledger's one verified read (`kaudit.open`); `LedgerError` names its first problem.

    With `anchored_prefix` (and `head`) it holds the records the anchor pins alone;
    without it, a ledger holding records after the anchor is refused.
    """
    from kaudit import open as open_ledger

    needs_head(head, anchored_prefix)
    with open_ledger(
        ledger, head=head, pubkey=pubkey, verify=not no_verify, anchored_prefix=anchored_prefix
    ) as snapshot:
        yield snapshot


@contextmanager
def opened_for_gate(
    ledger: str | Path, head: str | None, pubkey: Path | None, anchored_prefix: bool = False
) -> Iterator[Snapshot]:
    """The gate's read: a ledger that fails its check is still read, and denied on it.

    A malformed `--head` or an unreadable `--pubkey` is the caller's mistake, not
    evidence, so it raises before the ledger is opened instead of becoming a denial. A
    record after the anchor is denied on like any failed check, worded as every other
    reader words it.
    """
    from kaudit import open as open_ledger

    needs_head(head, anchored_prefix)
    anchor = None if head is None else parse_anchor(head)
    if pubkey is not None:
        if anchor is None:
            raise LedgerError("--pubkey needs --head: a signature is checked on an anchor")
        load_public_key(pubkey)
    with open_ledger(
        ledger, head=anchor, pubkey=pubkey, lenient=True, anchored_prefix=anchored_prefix
    ) as snapshot:
        if snapshot.verify_error is not None:  # printed in the denial as every error is
            snapshot.verify_error = in_flags(snapshot.verify_error)
        yield snapshot
