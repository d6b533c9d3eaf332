from __future__ import annotations

import io

from rich.console import Console

from kaudit.cli._tables import print_tables
from kaudit.report import TextTable

LONG = "billing/duplicate-payment-refund~distractors"


def test_terminal_tables_keep_ids_whole_in_a_narrow_terminal() -> None:
    """Bug caught: rich cutting the id with an ellipsis or folding it in a 30-column tty."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=30, color_system=None)
    print_tables([TextTable("cells", ("task", "n"), ((LONG, "8"),))], console)
    lines = out.getvalue().splitlines()
    # Too narrow for a row on one line: the id stands whole on its own, its cells below.
    assert lines[lines.index(LONG) + 1] == "  8"
