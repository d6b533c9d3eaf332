"""The one way every reader takes an anchor: a head (text or `Anchor`) and a public key.

Report, stats, gate, monitor, export and plan accept the same two inputs, check the
anchor's signature before opening the ledger, and carry in their JSON how many records
the anchor pins and which records after it were not counted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kaudit.errors import KauditError
from kaudit.ledger._anchor import Anchor, parse_anchor
from kaudit.ledger._verify import check_anchor_signature, unanchored_json


def reader_anchor(
    head: str | Anchor | None, pubkey: str | Path | None, no_verify: bool = False
) -> Anchor | None:
    """The anchor of `head` (`parse_anchor` text or an `Anchor`), its signature checked.

    With `pubkey`, the anchor must be signed by the ed25519 key in that file. An
    anchor is checked on a verified chain only, so `no_verify` refuses one.
    """
    if no_verify and (head is not None or pubkey is not None):
        raise KauditError("--no-verify cannot be combined with --head or --pubkey")
    anchor = parse_anchor(head) if isinstance(head, str) else head
    check_anchor_signature(anchor, None if pubkey is None else Path(pubkey))
    return anchor


def anchor_json(records: int, anchored_records: int | None) -> dict[str, Any]:
    """`{"anchor": {"anchored": N, "unanchored": {...}}}` to merge into a reader's JSON.

    Empty without an anchor, so a document read without one is unchanged.
    """
    if anchored_records is None:
        return {}
    return {
        "anchor": {
            "anchored": anchored_records,
            "unanchored": unanchored_json(records, anchored_records),
        }
    }
