"""Rendering the library's plain tables for a terminal (rich) or a pipe (aligned text)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.table import Table

from kaudit.report import TextTable, to_text


def rich_table(table: TextTable) -> Table:
    """A rich table whose id columns never wrap: a terminal too narrow scrolls instead."""
    out = Table(title=table.title, title_justify="left", box=box.SIMPLE_HEAD)
    for i, header in enumerate(table.headers):
        left = i < table.left
        out.add_column(header, justify="left" if left else "right", no_wrap=True)
    for row in table.rows:
        out.add_row(*row)
    return out


def _natural_width(table: TextTable) -> int:
    """Width of the table with no cell cut: content, two spaces of padding, one edge each."""
    widths = [
        max([len(h), *(len(row[i]) for row in table.rows)]) for i, h in enumerate(table.headers)
    ]
    return sum(widths) + 3 * len(widths) + 2


def print_tables(tables: Sequence[TextTable], console: Console) -> None:
    """Rich tables on a terminal; plain aligned text when stdout is a pipe or a file."""
    if console.is_terminal:
        for table in tables:
            rendered = rich_table(table)
            # Columns never wrap, so a table wider than the terminal is printed at its own
            # width (the terminal scrolls) instead of being cut with an ellipsis.
            needed = _natural_width(table)
            if needed > console.width:
                console.width = needed
            console.print(rendered)
    else:
        sys.stdout.write(to_text(tables))
