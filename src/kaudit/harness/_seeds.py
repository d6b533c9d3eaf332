"""Per-run seeds: a pure function of the campaign seed and the run's key."""

from __future__ import annotations

import hashlib


def run_seed(campaign_seed: int, model: str, task: str, run_index: int) -> int:
    """A 63-bit seed that does not depend on scheduling order or on which runs were resumed."""
    text = f"{campaign_seed}\0{model}\0{task}\0{run_index}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1
