"""Rendering the library's plain tables for a terminal (rich) or a pipe (aligned text).

Ids (the leading `left` columns: model, task) are what a reader copies into the next
command, so they are never cut or folded. On a terminal a table that fits is a rich
table; one that does not is plain text whose headers fold to fit the width, and when
even that is too wide, one block per row (`kaudit.report.to_text` with a width). Piped
or redirected output is plain aligned text, one line per row, whatever the width.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.table import Table

from kaudit._printable import printable
from kaudit.report import TextTable, to_text


def rich_table(table: TextTable) -> Table:
    """A rich table whose columns never wrap (it is only used when it fits)."""
    out = Table(title=table.title, title_justify="left", box=box.SIMPLE_HEAD)
    for i, header in enumerate(table.headers):
        left = i < table.left
        out.add_column(header, justify="left" if left else "right", no_wrap=True)
    for row in table.rows:
        out.add_row(*row)
    return out


def natural_width(table: TextTable) -> int:
    """Width of the rich table with no cell cut: content, two spaces of padding, one edge each."""
    widths = [
        max([len(h), *(len(row[i]) for row in table.rows)]) for i, h in enumerate(table.headers)
    ]
    return sum(widths) + 3 * len(widths) + 2


def print_tables(tables: Sequence[TextTable], console: Console) -> None:
    """Rich tables on a terminal, folded or stacked plain text when too wide; text when piped."""
    if not console.is_terminal:
        sys.stdout.write(to_text(tables))
        return
    for number, table in enumerate(tables):
        if natural_width(table) <= console.width:
            console.print(rich_table(table))
        else:
            if number:
                console.print()
            # The title may wrap like prose; the rows are already laid out to fit.
            title, body = to_text([table], width=console.width).split("\n", 1)
            console.print(title, markup=False, highlight=False)
            console.print(body, end="", markup=False, highlight=False, soft_wrap=True)


def print_blocks(blocks: Sequence[str | Sequence[TextTable]], console: Console) -> None:
    """A report's blocks in order: each line as it is, each group of tables as above."""
    for block in blocks:
        if isinstance(block, str):
            console.print(printable(block), soft_wrap=True, markup=False)
        else:
            print_tables(block, console)
