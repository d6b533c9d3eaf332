"""What SQLite's authorizer never reports about a statement, read from its words.

The statement gate (`substrate._gate`) judges every statement by what SQLite asks
while compiling it. Three things it is never asked about: a conflict clause
(`INSERT OR ROLLBACK`), a constraint or trigger that can roll back or defer
(`ON CONFLICT ROLLBACK`, `RAISE(ROLLBACK, ...)`, `DEFERRABLE`), and `VACUUM`, which
asks nothing while compiling and cannot run inside a transaction. A pooled run must
know them before the statement runs, so they are read here: comments, string
literals and quoted names are separate tokens, read left to right in one pass, and
their words never count (`UPDATE t SET a = 1 -- or rollback` is harmless).
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""
    (?P<space>[ \t\n\f\r\v]+)
    | (?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
    | (?P<string>'(?:[^']|'')*(?:'|\Z))
    | (?P<quoted>"(?:[^"]|"")*(?:"|\Z)|`(?:[^`]|``)*(?:`|\Z)|\[[^\]]*(?:\]|\Z))
    | (?P<word>[A-Za-z0-9_$\x80-\U0010ffff]+)
    | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_DDL = frozenset({"CREATE", "ALTER"})
_DDL_UNSAFE = frozenset({"ROLLBACK", "DEFERRABLE", "DEFERRED"})
_HINTS = ("rollback", "defer", "vacuum")
"""Substrings without which a statement needs no reading at all (most tool SQL)."""


@dataclass(frozen=True)
class Statement:
    """The words of one statement that decide how a pooled run may run it.

    `kind` is the first keyword after any `EXPLAIN [QUERY PLAN]` and empty statements,
    upper case ("" when there is none); `words` every unquoted word, upper case.
    """

    kind: str
    explained: bool
    words: tuple[str, ...]

    @property
    def rolls_back_or_defers(self) -> bool:
        """`OR ROLLBACK` in a write; `ROLLBACK`, `DEFERRABLE` or `DEFERRED` in DDL."""
        if self.kind in _DDL:
            return not _DDL_UNSAFE.isdisjoint(self.words)
        return any(a == "OR" and b == "ROLLBACK" for a, b in itertools.pairwise(self.words))

    @property
    def vacuums(self) -> bool:
        """Whether the statement runs VACUUM (EXPLAIN VACUUM only compiles it)."""
        return self.kind == "VACUUM" and not self.explained


def _tokens(sql: str) -> list[tuple[bool, str]]:
    """(is a word, text upper case) of every token but spaces, comments, literals, names."""
    return [
        (match.lastgroup == "word", match.group().upper())
        for match in _TOKEN.finditer(sql)
        if match.lastgroup in ("word", "other")
    ]


@functools.lru_cache(maxsize=4096)
def read_statement(sql: str) -> Statement:
    """The statement's kind and words, memoized (tools repeat their SQL)."""
    tokens = _tokens(sql)
    start = 0
    while start < len(tokens) and tokens[start] == (False, ";"):
        start += 1  # SQLite skips empty statements before the first
    explained = tokens[start : start + 1] == [(True, "EXPLAIN")]
    if explained:
        plan = tokens[start + 1 : start + 3] == [(True, "QUERY"), (True, "PLAN")]
        start += 3 if plan else 1
    is_word, kind = tokens[start] if start < len(tokens) else (False, "")
    words = tuple(text for word, text in tokens if word)
    return Statement(kind if is_word else "", explained, words)


def needs_reading(sql: str) -> bool:
    """Whether `sql` may hold a word the authorizer never reports (a cheap first test)."""
    lowered = sql.lower()
    return any(hint in lowered for hint in _HINTS)
