"""The stopping rule line of a report, read from the campaign manifest.

A sequential audit's intervals mean something different from a fixed-k audit's, so a
report must say which rule produced its run counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def stopping_rule_text(manifest: Mapping[str, Any] | None) -> str | None:
    """The rule's sentence ('fixed: k = 8 runs per cell', 'sequential: …'), None if unknown."""
    if not manifest:
        return None
    rule = manifest.get("stopping_rule")
    if isinstance(rule, Mapping) and isinstance(rule.get("text"), str):
        return str(rule["text"])
    k = manifest.get("k")
    return f"fixed: k = {k} runs per cell" if isinstance(k, int) else None
