"""What every command shares: error rendering and JSON output."""

from __future__ import annotations

import json
import math
import sqlite3
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from kaudit._printable import printable
from kaudit.cli._flags import in_flags
from kaudit.errors import KauditError
from kaudit.ledger import Anchor

T = TypeVar("T")

err_console = Console(stderr=True)


def error_line(exc: BaseException) -> str | None:
    """The one line a user error is shown as; None for an exception that is a bug.

    kaudit's own errors (an argument the library names is written as its flag,
    `in_flags`), OS errors (disk full, permissions), SQLite errors, text that is not
    UTF-8 and input nested too deep for Python are user-facing. A bare `ValueError` is
    not: the library raises `InputError` for bad input, so any other one is a bug and
    keeps its traceback. Every message is folded to one line: a YAML or PostgreSQL
    error spans several.
    """
    if isinstance(exc, KauditError):
        message = in_flags(str(exc))
    elif isinstance(exc, OSError):  # a full disk, a vanished file: the OS's words
        where = f"{exc.filename}: " if exc.filename else ""
        message = f"{where}{exc.strerror or exc}"
    elif isinstance(exc, sqlite3.Error):
        message = f"database error: {exc}"
    elif isinstance(exc, UnicodeError):
        message = f"not UTF-8 text ({exc})"
    elif isinstance(exc, RecursionError):
        message = "input nested too deeply to read"
    else:
        return None
    return " ".join(message.split()) or type(exc).__name__


@contextmanager
def friendly_errors() -> Iterator[None]:
    """Turn user errors into one red line and exit code 2; other bugs keep their trace."""
    try:
        yield
    except (KauditError, OSError, sqlite3.Error, UnicodeError, RecursionError) as exc:
        _fail(error_line(exc) or type(exc).__name__)


def print_error(message: str) -> None:
    """`error: <message>` on stderr, on one line, the message never read as markup."""
    err_console.print(
        f"[red]error:[/red] {escape(printable(' '.join(message.split())))}",
        highlight=False,
        soft_wrap=True,
    )


def _fail(message: str) -> NoReturn:
    """One red line on stderr and exit code 2."""
    print_error(message)
    raise typer.Exit(2)


def print_json(data: Any) -> None:
    """Machine-readable output on stdout, nothing else; an undefined number is null.

    Python's `json` would write bare `NaN`, which is not JSON and breaks strict parsers.
    """
    sys.stdout.write(json.dumps(_finite(data), indent=2, default=str, allow_nan=False) + "\n")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def head_line(anchor: Anchor) -> str:
    """The one line `run`, `export`, `import`, `grade` and `ledger head` end with, to keep.

    It names the grades chain's head too once the ledger holds grades.
    """
    line = f"ledger head: {anchor.records} records, head {anchor.head}"
    if anchor.grades:
        line += f"; {anchor.grades} grades, grades head {anchor.grades_head}"
    return line


def split_csv(value: str | None) -> list[str] | None:
    """`a,b` -> ['a', 'b']; None stays None."""
    if value is None:
        return None
    return [part.strip() for part in value.split(",") if part.strip()]


def guarded(fn: Callable[..., T]) -> Callable[..., T]:
    """Decorator form of `friendly_errors` that keeps typer's signature introspection."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        with friendly_errors():
            return fn(*args, **kwargs)

    return wrapper
