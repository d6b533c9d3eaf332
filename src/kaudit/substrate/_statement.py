"""What one SQL statement is, read the way SQLite's tokenizer reads it.

A sandbox sorts the statements it runs by kind (a PRAGMA, an ATTACH, a write that can
roll back), so the words that decide must be the ones SQLite acts on: comments,
string literals and quoted names are separate tokens, read left to right in one pass
(a quote inside a comment opens nothing, a `--` inside a literal comments nothing
out), and `EXPLAIN` is looked through, because SQLite applies many PRAGMAs while
compiling them, `EXPLAIN PRAGMA foreign_keys = OFF` included. Words inside comments,
literals and quoted names never count.
"""

from __future__ import annotations

import functools
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


@dataclass(frozen=True)
class Statement:
    """The facts about one statement that decide how a sandbox may run it.

    `kind` is the first keyword after any `EXPLAIN [QUERY PLAN]`, upper case ("" when
    there is none); `words` every unquoted word, upper case, in order; `pragma` the
    PRAGMA's name, lower case and unquoted, and `sets` whether it is given a value.
    """

    kind: str
    explained: bool
    words: tuple[str, ...]
    pragma: str | None = None
    sets: bool = False
    names: frozenset[str] = frozenset()
    """Every word, quoted name and string literal, lower case: SQLite takes a string
    literal for a name where a name is expected (`DELETE FROM 'log'`)."""


def tokens_of(sql: str) -> list[tuple[str, str]]:
    """(type, text) of every token but spaces and comments; quoted names unquoted."""
    out: list[tuple[str, str]] = []
    for match in _TOKEN.finditer(sql):
        kind = match.lastgroup or "other"
        text = match.group()
        if kind in ("space", "comment"):
            continue
        if kind == "quoted":
            text = text[1:-1] if len(text) > 1 else ""
        out.append((kind, text))
    return out


def _pragma(tokens: list[tuple[str, str]]) -> tuple[str, bool]:
    """The name of the PRAGMA `tokens` start after, and whether a value follows it.

    `PRAGMA [schema.]name [= value | (value)]`; the name may be quoted.
    """
    names = [text for kind, text in tokens[:3] if kind in ("word", "quoted")]
    dotted = len(tokens) > 1 and tokens[1] == ("other", ".")
    name = names[1] if dotted and len(names) > 1 else (names[0] if names else "")
    rest = tokens[3:] if dotted else tokens[1:]
    sets = bool(rest) and rest[0] in (("other", "="), ("other", "("))
    return name.lower(), sets


def statement_tokens(sql: str) -> list[tuple[str, str]]:
    """The tokens of `sql` from its first statement on.

    SQLite skips empty statements (`;`) before it, so `;ATTACH ...` is an ATTACH.
    """
    tokens = tokens_of(sql)
    start = 0
    while start < len(tokens) and tokens[start] == ("other", ";"):
        start += 1
    return tokens[start:]


@functools.lru_cache(maxsize=4096)
def read_statement(sql: str) -> Statement:
    """The statement's kind, words and PRAGMA, memoized (tools repeat their SQL)."""
    tokens = statement_tokens(sql)
    words = tuple(text.upper() for kind, text in tokens if kind == "word")
    upper = [(kind, text.upper()) for kind, text in tokens[:3]]
    explained = upper[:1] == [("word", "EXPLAIN")]
    start = 0
    if explained:
        start = 3 if upper[1:3] == [("word", "QUERY"), ("word", "PLAN")] else 1
    body = tokens[start:]
    kind = body[0][1].upper() if body and body[0][0] == "word" else ""
    names = frozenset(text.strip("'").lower() for kind, text in tokens if kind != "other")
    if kind != "PRAGMA":
        return Statement(kind, explained, words, names=names)
    name, sets = _pragma(body[1:])
    return Statement(kind, explained, words, name, sets, names)
