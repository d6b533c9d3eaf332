"""Exact value identity and JSON rendering for SQLite values.

SQLite's `=` and Python's `==` both say 1 == 1.0; a change of storage class is a
real change to whoever reads the row next, so identity here is (type, value).
"""

from __future__ import annotations

from typing import Any

Value = int | float | str | bytes | None


def same_value(a: Value, b: Value) -> bool:
    """True only when both the storage type and the value are identical."""
    return type(a) is type(b) and a == b


def to_json_value(value: Any) -> Any:
    """A JSON-safe form: blobs become {"$blob": hex}; floats keep their exact repr."""
    if isinstance(value, bytes):
        return {"$blob": value.hex()}
    return value
