"""The `--head`, `--pubkey` and `--anchored-prefix` options every reader takes, and its notes.

The anchor itself is read by `kaudit.ledger._reader_anchor.reader_anchor`; here are the
typer options, the line on stderr saying how many records the anchor pins, and the line
saying how many served runs wait in the ledger's spool (finished, so not lost, but not yet
counted).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kaudit.cli._common import err_console
from kaudit.cli._plural import counted
from kaudit.ledger._spool import pending_spool, spool_dir

HeadOpt = Annotated[
    str | None,
    typer.Option(
        "--head",
        help="Anchor the chain must still hold (a head hex, `ledger head --json`, or its "
        "file); a ledger holding records after it is refused unless --anchored-prefix.",
    ),
]
PubkeyOpt = Annotated[
    Path | None,
    typer.Option("--pubkey", help="ed25519 public key (PEM) the anchor must be signed by."),
]
AnchoredPrefixOpt = Annotated[
    bool,
    typer.Option(
        "--anchored-prefix",
        help="With --head: read only the records (and grades) the anchor pins, and say how "
        "many after it were left out, instead of refusing the ledger.",
    ),
]


def unanchored_line(records: int, anchored_records: int | None) -> str | None:
    """What the anchor pins, as the line every reader given `--head` prints."""
    if anchored_records is None:
        return None
    line = f"anchor: records 1-{anchored_records} of {records} are anchored"
    after = records - anchored_records
    if after:
        line += (
            f"; {after} record(s) after it (records {anchored_records + 1}-{records}) are left out"
        )
    return line


def note_anchor(
    records: int,
    anchored_records: int | None,
    as_json: bool = False,
    grades: tuple[int, int | None] = (0, None),
) -> None:
    """Print `unanchored_line` on stderr (stdout stays the command's output).

    `grades` is (grades, anchored grades) for a reader of the grades chain, which gets
    a second line. Nothing with `as_json`: the JSON document carries it (`anchor_json`).
    """
    from kaudit.ledger._reader_anchor import unanchored_grades_line

    lines = (unanchored_line(records, anchored_records), unanchored_grades_line(*grades))
    for line in lines:
        if line is not None and not as_json:
            err_console.print(line, highlight=False, soft_wrap=True, markup=False)


def note_spool(ledger: Path) -> None:
    """Say on stderr how many served runs wait in the spool and are not in the figures.

    Printed with `--json` too: the document is the chain's, and a waiting run is not in
    it, but whoever reads the figures should know one is on its way.
    """
    waiting = pending_spool(ledger)
    if waiting:
        err_console.print(
            f"note: {counted(waiting, 'served run')} {'waits' if waiting == 1 else 'wait'} in "
            f"{spool_dir(ledger)}/, not counted yet; `kaudit ledger drain {ledger}` "
            "appends those the ledger issued a claim for and names the rest",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
