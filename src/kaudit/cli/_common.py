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

from kaudit.errors import KauditError
from kaudit.ledger import Anchor

T = TypeVar("T")

err_console = Console(stderr=True)


@contextmanager
def friendly_errors() -> Iterator[None]:
    """Turn user errors into one red line and exit code 2; other bugs keep their trace.

    kaudit's own errors, OS errors (disk full, permissions), SQLite errors and the
    ValueErrors library functions raise on out-of-range arguments are user-facing.
    """
    try:
        yield
    except KauditError as exc:
        _fail(str(exc))
    except OSError as exc:  # a full disk, a vanished file: the OS's words, one line
        where = f"{exc.filename}: " if exc.filename else ""
        _fail(f"{where}{exc.strerror or exc}")
    except sqlite3.Error as exc:
        _fail(f"database error: {exc}")
    except ValueError as exc:  # a library precondition an option did not meet
        _fail(" ".join(str(exc).split()))


def _fail(message: str) -> NoReturn:
    """One red line on stderr and exit code 2."""
    err_console.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
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
    """The one line `run`, `export`, `import` and `ledger head` end with, to keep elsewhere."""
    return f"ledger head: {anchor.records} records, head {anchor.head}"


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
