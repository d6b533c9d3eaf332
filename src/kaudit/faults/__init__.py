"""Commit-boundary faults: lost acknowledgements, failures before commit, timeouts, duplicates."""

from kaudit.faults._layer import CONNECTION_LOST, TIMED_OUT, FaultLayer
from kaudit.faults._parse import parse_faults

__all__ = ["CONNECTION_LOST", "TIMED_OUT", "FaultLayer", "parse_faults"]
