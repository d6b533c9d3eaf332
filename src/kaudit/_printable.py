r"""Names from outside (a model's, a task's, an MCP client's) made safe to print.

A client may declare its name as `ESC[2J`, and a task id may hold any character: printed
raw, such a name clears or rewrites the auditor's terminal. Every control character is
shown as its escape instead (`\x1b`), so the name reads as what it is.
"""

from __future__ import annotations

import re

__all__ = ["printable"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""C0 (but tab and newline), DEL, C1, line separators and bidirectional overrides."""


def printable(text: str) -> str:
    r"""`text` with every control character written as a Python escape (`\x1b`)."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode(), text)
