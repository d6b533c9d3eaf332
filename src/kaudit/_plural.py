"""Counts with the noun in the right number ("1 run", "2 runs"), thousands separated."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and `noun`, plural unless `n` is exactly one; `plural` for irregular nouns."""
    word = noun if n == 1 else (plural or f"{noun}s")
    return f"{n:,} {word}"
