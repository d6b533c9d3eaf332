"""Tables as plain data, rendered as aligned text here and as rich tables by the CLI.

One table value feeds both renderings, so a piped report and a terminal report can never
show different numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kaudit._printable import printable

__all__ = ["Block", "TextTable", "blocks_text", "to_text"]


@dataclass(frozen=True)
class TextTable:
    """A titled table of strings.

    Attributes:
        title: One line above the table.
        headers: Column names.
        rows: Cells, already formatted; every row has one cell per header.
        left: How many leading columns are left-aligned (names, ids, text); the rest are
            numbers.
        ids: How many leading columns identify a row (model, task): never folded, and on
            a line of their own when the table is too wide. Defaults to `left`.
    """

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    left: int = 1
    ids: int | None = None

    @property
    def id_columns(self) -> int:
        """How many leading columns identify a row."""
        return self.left if self.ids is None else self.ids

    def __post_init__(self) -> None:
        bad = [row for row in self.rows if len(row) != len(self.headers)]
        if bad:
            raise ValueError(f"table {self.title!r}: row {bad[0]} has the wrong number of cells")
        # Cells hold names from outside (models, tasks): a control character in one is
        # shown as its escape, never sent to the terminal.
        object.__setattr__(self, "title", printable(self.title))
        object.__setattr__(self, "rows", tuple(tuple(map(printable, row)) for row in self.rows))


def to_text(tables: Sequence[TextTable], width: int | None = None) -> str:
    """Aligned plain text, one block per table; ids are never wrapped or cut, whatever width.

    Without `width` (a pipe, a file) every row is one line however long. With `width` (a
    terminal) headers fold at spaces and underscores to fit it, and a table that still
    does not fit is printed one block per row (:func:`stacked`); cells never fold, since
    a number or an id split over two lines reads as two.
    """
    return "\n\n".join(_fitted(table, width) for table in tables) + "\n"


Block = str | tuple[TextTable, ...]
"""One piece of a text report: a line, or tables printed together."""


def blocks_text(blocks: Iterable[Block]) -> str:
    """A report's blocks as plain text: each line, then each group of tables aligned."""
    return "".join(
        printable(block) + "\n" if isinstance(block, str) else to_text(block) for block in blocks
    )


def _fitted(table: TextTable, width: int | None) -> str:
    """The first layout that fits: one line a row, headers folded, ids above, stacked."""
    if width is None or _line_width(_widths(table, folded=False)) <= width:
        return _aligned(table, _widths(table, folded=False))
    widths = _widths(table, folded=True)
    if _line_width(widths) <= width:
        return _aligned(table, widths)
    n = table.id_columns
    values = TextTable(table.title, table.headers[n:], tuple(row[n:] for row in table.rows),
                       left=max(table.left - n, 0), ids=0)  # fmt: skip
    indent = 2
    if values.headers and indent + _line_width(_widths(values, folded=True)) <= width:
        return _ids_above(table, values, _widths(values, folded=True), indent)
    return stacked(table)


def _ids_above(table: TextTable, values: TextTable, widths: list[int], indent: int) -> str:
    """Two lines a row: the ids, then the other cells aligned beneath, indented."""
    pad = " " * indent
    body = _aligned(values, widths).splitlines()[1:]  # without the title
    head, rows = body[: -len(values.rows) or None], body[len(body) - len(values.rows) :]
    n = table.id_columns
    lines = [table.title, "  ".join(table.headers[:n])]
    lines += [pad + line for line in head]
    for row, cells in zip(table.rows, rows, strict=True):
        lines += ["  ".join(row[:n]), pad + cells]
    return "\n".join(lines)


def stacked(table: TextTable) -> str:
    """One block per row: the ids on one line, then each other cell as `header value`."""
    lines, n = [table.title], table.id_columns
    for row in table.rows:
        lines.append("  ".join(row[:n]))
        cells = zip(table.headers[n:], row[n:], strict=True)
        lines.extend(f"    {header} {value}" for header, value in cells if value)
    return "\n".join(lines)


def _header_words(header: str) -> list[str]:
    """Where a header may fold: after spaces and underscores (`completed_` / `clean`)."""
    return re.findall(r"[^ _]+_*|_+", header.replace(" ", "  ")) or [header]


def _fold(header: str, width: int) -> list[str]:
    """The header as lines of at most `width` characters (a longer word stays whole)."""
    lines: list[str] = []
    for word in _header_words(header):
        joiner = "" if not lines or lines[-1].endswith("_") else " "
        if lines and len(lines[-1]) + len(joiner) + len(word) <= width:
            lines[-1] += joiner + word
        else:
            lines.append(word)
    return lines


def _widths(table: TextTable, folded: bool) -> list[int]:
    """Each column's width: its widest cell, and its header (or longest header word)."""
    widths = []
    for i, header in enumerate(table.headers):
        cells = max([0, *(len(row[i]) for row in table.rows)])
        shown = (
            max(len(w) for w in _header_words(header))
            if folded and i >= table.id_columns
            else len(header)
        )
        widths.append(max(cells, shown))
    return widths


def _line_width(widths: Sequence[int]) -> int:
    return sum(widths) + 2 * (len(widths) - 1)


def _aligned(table: TextTable, widths: list[int]) -> str:
    def line(cells: Sequence[str]) -> str:
        parts = [
            cell.ljust(w) if i < table.left else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    folded = [
        _fold(h, w) if len(h) > w else [h] for h, w in zip(table.headers, widths, strict=True)
    ]
    depth = max(len(f) for f in folded)
    # A folded header's lines sit at the bottom, next to the rule, like a one-line header.
    header_lines = [
        line([(([""] * (depth - len(f))) + f)[k] for f in folded]) for k in range(depth)
    ]
    rule = "  ".join("-" * w for w in widths)
    return "\n".join([table.title, *header_lines, rule, *(line(row) for row in table.rows)])
