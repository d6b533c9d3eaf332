"""Commit-boundary faults: lost acknowledgements, failures before commit, timeouts, duplicates."""

from kaudit.faults._layer import FaultLayer

__all__ = [
    "FaultLayer",
]
