"""The one way every reader takes an anchor: a head (text or `Anchor`) and a public key.

Report, stats, gate, monitor, export and plan accept the same two inputs, check the
anchor's signature before opening the ledger, and carry in their JSON how many records
(and, where grades are read, how many grades) the anchor pins and, when they read the
anchored prefix alone, which came after it and were left out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kaudit.errors import InputError
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
        raise InputError(
            "head" if head is not None else "pubkey",
            "cannot be combined with `verify=False`: an anchor is checked on a verified chain",
        )
    anchor = parse_anchor(head) if isinstance(head, str) else head
    check_anchor_signature(anchor, None if pubkey is None else Path(pubkey))
    return anchor


def anchor_json(
    records: int, anchored_records: int | None, grades: int = 0, anchored_grades: int | None = None
) -> dict[str, Any]:
    """`{"anchor": {"anchored": N, "unanchored": {...}}}` to merge into a reader's JSON.

    With grades in the ledger, also `"grades": {"anchored": G, "unanchored": {...}}` for
    the grades chain. Empty without an anchor, so a document read without one is
    unchanged.
    """
    if anchored_records is None:
        return {}
    data: dict[str, Any] = {
        "anchored": anchored_records,
        "unanchored": unanchored_json(records, anchored_records),
    }
    if grades:
        pinned = anchored_grades or 0
        data["grades"] = {
            "anchored": pinned,
            "unanchored": unanchored_json(grades, pinned, "grades"),
        }
    return {"anchor": data}


def unanchored_grades_line(grades: int, anchored_grades: int | None) -> str | None:
    """What an anchor pins of the grades chain, as a reader given `--head` says it.

    None without an anchor or without grades.
    """
    if anchored_grades is None or not grades:
        return None
    if anchored_grades == 0:
        return (
            f"anchor: it pins none of the {grades} grade(s) (taken before grading, or an "
            f"anchor of the runs chain only); grades 1-{grades} are left out: anchor the "
            "ledger again after `kaudit grade`"
        )
    line = f"anchor: grades 1-{anchored_grades} of {grades} are anchored"
    after = grades - anchored_grades
    if after:
        line += f"; {after} grade(s) after it (grades {anchored_grades + 1}-{grades}) are left out"
    return line
