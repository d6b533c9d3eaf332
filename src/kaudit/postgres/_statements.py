"""What a client's SQL text says about transactions: the statements, commits, writes.

The proxy must decide *before* forwarding whether a batch ends a writing transaction
(to drop the connection before a COMMIT for `fail_before_commit`), so it reads the
statements' leading keywords. Comments and quoted text (strings, identifiers,
dollar quotes) are skipped when splitting, so a `;` or a `COMMIT` inside them is not
taken for a statement. The server's own answers (CommandComplete tags, the
ReadyForQuery status) settle what really happened afterwards.
"""

from __future__ import annotations

import re

_DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z_0-9]*)?\$")
_WORD = re.compile(r"[A-Za-z_]+")
_COMMITS = {"COMMIT", "END"}
_BEGINS = {"BEGIN", "START"}
_ROLLBACKS = {"ROLLBACK", "ABORT"}
_WRITES = {"INSERT", "UPDATE", "DELETE", "MERGE", "TRUNCATE"}
"""COPY is left out: COPY FROM STDIN needs the client's data before the batch ends, so
its answer cannot be held back."""
WRITE_TAGS = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE", "COPY", "TRUNCATE"})
"""CommandComplete tags of statements that change rows (`COPY n` of COPY FROM as well)."""


def split_statements(text: str) -> list[str]:
    """The statements of a simple Query's text, stripped, empty ones dropped."""
    out: list[str] = []
    start = i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == ";":
            out.append(text[start:i])
            start = i + 1
            i += 1
        elif text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c in "'\"":
            end = text.find(c, i + 1)
            while end >= 0 and text.startswith(c, end + 1):  # a doubled quote inside
                end = text.find(c, end + 2)
            i = n if end < 0 else end + 1
        elif c == "$" and (m := _DOLLAR.match(text, i)):
            end = text.find(m.group(0), m.end())
            i = n if end < 0 else end + len(m.group(0))
        else:
            i += 1
    out.append(text[start:])
    return [s.strip() for s in out if _leading_word(s)]


def _leading_word(statement: str) -> str:
    """The first keyword of a statement, upper-case, after comments and parentheses."""
    text = statement
    while True:
        text = text.lstrip().lstrip("(").lstrip()
        if text.startswith("--"):
            text = text.partition("\n")[2]
        elif text.startswith("/*"):
            text = text.partition("*/")[2]
        else:
            break
    match = _WORD.match(text)
    return match.group(0).upper() if match else ""


def is_commit(statement: str) -> bool:
    """COMMIT, END, COMMIT AND CHAIN, COMMIT WORK/TRANSACTION, in any case."""
    return _leading_word(statement) in _COMMITS


def is_begin(statement: str) -> bool:
    """BEGIN or START TRANSACTION."""
    return _leading_word(statement) in _BEGINS


def is_rollback(statement: str) -> bool:
    """ROLLBACK or ABORT, ROLLBACK TO SAVEPOINT included.

    A savepoint's rollback ends no transaction, but a batch holding one is not taken
    for a commit, which only spares it a fault.
    """
    return _leading_word(statement) in _ROLLBACKS


def may_write(statement: str) -> bool:
    """Whether the statement changes rows.

    INSERT, UPDATE, DELETE, MERGE, TRUNCATE, or a WITH query holding one of them; a
    function called by a SELECT is not seen.
    """
    word = _leading_word(statement)
    if word in _WRITES:
        return True
    if word == "WITH":
        words = {w.upper() for w in _WORD.findall(statement)}
        return bool(words & {"INSERT", "UPDATE", "DELETE", "MERGE"})
    return False
