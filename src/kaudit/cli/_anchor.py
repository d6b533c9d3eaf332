"""The one way every reader takes an anchor: `--head`, `--pubkey`, and the note it prints.

Report, stats, gate, monitor, export and plan all accept the same two options, check
the anchor's signature before opening the ledger, and say on stderr how many records
the anchor pins and which records after it were not counted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from kaudit.cli._common import err_console
from kaudit.errors import KauditError
from kaudit.ledger import Anchor, check_anchor_signature, parse_anchor
from kaudit.ledger._verify import unanchored_json

HeadOpt = Annotated[
    str | None,
    typer.Option(
        "--head",
        help="Anchor the chain must still hold (a head hex, `ledger head --json`, or its "
        "file); records after it are not counted.",
    ),
]
PubkeyOpt = Annotated[
    Path | None,
    typer.Option("--pubkey", help="ed25519 public key (PEM) the anchor must be signed by."),
]


def reader_anchor(head: str | None, pubkey: Path | None, no_verify: bool = False) -> Anchor | None:
    """The anchor of `--head`, its signature checked against `--pubkey` when given.

    An anchor is checked on a verified chain only, so `--no-verify` refuses one.
    """
    if no_verify and (head is not None or pubkey is not None):
        raise KauditError("--no-verify cannot be combined with --head or --pubkey")
    anchor = parse_anchor(head) if head is not None else None
    check_anchor_signature(anchor, pubkey)
    return anchor


def unanchored_line(records: int, anchored_records: int | None) -> str | None:
    """What the anchor pins, as the line every reader given `--head` prints."""
    if anchored_records is None:
        return None
    line = f"anchor: records 1-{anchored_records} of {records} are anchored"
    after = records - anchored_records
    if after:
        line += (
            f"; {after} record(s) after it (records {anchored_records + 1}-{records}) are "
            "unanchored and not counted"
        )
    return line


def note_anchor(records: int, anchored_records: int | None, as_json: bool = False) -> None:
    """Print `unanchored_line` on stderr (stdout stays the command's output).

    Nothing with `as_json`: the JSON document carries it instead (`anchor_json`).
    """
    line = unanchored_line(records, anchored_records)
    if line is not None and not as_json:
        err_console.print(line, highlight=False, soft_wrap=True, markup=False)


def anchor_json(records: int, anchored_records: int | None) -> dict[str, Any]:
    """`{"anchor": {"anchored": N, "unanchored": {...}}}` to merge into a reader's JSON.

    Empty without an anchor, so a document read without `--head` is unchanged.
    """
    if anchored_records is None:
        return {}
    return {
        "anchor": {
            "anchored": anchored_records,
            "unanchored": unanchored_json(records, anchored_records),
        }
    }
