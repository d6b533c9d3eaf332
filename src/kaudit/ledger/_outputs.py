"""Where a reader may write: never over its ledger, nor over any other SQLite file.

`kaudit report L --html L` and `kaudit export L --out L` replaced the ledger with a
page or a CSV. An output path that is the ledger (by any spelling or link) or that
already holds a SQLite database is refused before anything is written.
"""

from __future__ import annotations

from pathlib import Path

from kaudit.errors import KauditError

__all__ = ["refuse_sqlite_output"]

_SQLITE_MAGIC = b"SQLite format 3\x00"


def refuse_sqlite_output(out: Path, ledger: Path | None = None) -> None:
    """Raise KauditError when writing `out` would overwrite `ledger` or a SQLite file."""
    if ledger is not None and out.exists() and ledger.exists() and out.samefile(ledger):
        raise KauditError(f"{out}: is the ledger being read; choose another output file")
    if out.is_file():
        try:
            with out.open("rb") as handle:
                magic = handle.read(len(_SQLITE_MAGIC))
        except OSError:
            return
        if magic == _SQLITE_MAGIC:
            raise KauditError(
                f"{out}: is a SQLite database (a ledger?); an output never overwrites one"
            )
