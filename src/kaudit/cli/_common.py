"""What every command shares: error rendering and JSON output."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import typer
from rich.console import Console

from kaudit.errors import KauditError

T = TypeVar("T")

err_console = Console(stderr=True)


@contextmanager
def friendly_errors() -> Iterator[None]:
    """Turn kaudit's own errors into one red line and exit code 2; bugs keep their trace."""
    try:
        yield
    except KauditError as exc:
        err_console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def print_json(data: Any) -> None:
    """Machine-readable output on stdout, nothing else."""
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


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
