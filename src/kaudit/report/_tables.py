"""Tables as plain data, rendered as aligned text here and as rich tables by the CLI.

One table value feeds both renderings, so a piped report and a terminal report can never
show different numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["TextTable", "to_text"]


@dataclass(frozen=True)
class TextTable:
    """A titled table of strings.

    Attributes:
        title: One line above the table.
        headers: Column names.
        rows: Cells, already formatted; every row has one cell per header.
        left: How many leading columns are left-aligned (names, ids); the rest are numbers.
    """

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    left: int = 1

    def __post_init__(self) -> None:
        bad = [row for row in self.rows if len(row) != len(self.headers)]
        if bad:
            raise ValueError(f"table {self.title!r}: row {bad[0]} has the wrong number of cells")


def to_text(tables: Sequence[TextTable]) -> str:
    """Aligned plain text, one block per table; ids are never wrapped or cut, whatever width.

    Used when stdout is not a terminal (`kaudit report L | cat`), where a width-fitting
    renderer would fold long task ids into fragments over several lines.
    """
    blocks = []
    for table in tables:
        widths = [
            max([len(h), *(len(row[i]) for row in table.rows)]) for i, h in enumerate(table.headers)
        ]

        def line(cells: Sequence[str], widths: list[int] = widths, left: int = table.left) -> str:
            parts = [
                cell.ljust(w) if i < left else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(cells, widths, strict=True))
            ]
            return "  ".join(parts).rstrip()

        rule = "  ".join("-" * w for w in widths)
        body = [line(table.headers), rule, *(line(row) for row in table.rows)]
        blocks.append("\n".join([table.title, *body]))
    return "\n\n".join(blocks) + "\n"
