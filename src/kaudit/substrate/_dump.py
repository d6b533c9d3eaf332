"""A sandbox's full state captured before cleanup: the SQLite image and its schema."""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from kaudit.substrate._schema import Schema, read_schema

if TYPE_CHECKING:
    from kaudit.substrate._frozen import FrozenState


@dataclass(frozen=True)
class StateDump:
    """The whole database as SQLite bytes; the labeler diffs two of these.

    Every substrate dumps to this one format, so the labeler has one input shape.
    `digest` is the sha256 of the image bytes.
    """

    image: bytes
    digest: str

    @classmethod
    def of(cls, image: bytes) -> StateDump:
        """Wrap an image and compute its digest."""
        return cls(image=image, digest=hashlib.sha256(image).hexdigest())

    def open(self) -> sqlite3.Connection:
        """A private in-memory connection over a copy of the image."""
        conn = sqlite3.connect(":memory:")
        conn.deserialize(self.image)
        return conn

    def schema(self) -> Schema:
        """Tables, columns and primary keys, read from the image."""
        conn = self.open()
        try:
            return read_schema(conn)
        finally:
            conn.close()

    def release(self) -> None:
        """Nothing to free: the bytes are the dump."""


Dump: TypeAlias = "StateDump | FrozenState"
"""What `Sandbox.dump()` returns: the image as bytes, or the state frozen where it lies.

Both give `image`, `digest`, `schema()`, `open()` and `release()`; the labeler reads a
`FrozenState` in place instead of copying its image.
"""
