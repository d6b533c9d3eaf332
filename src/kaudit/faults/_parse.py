"""The `NAME[:RATE][,NAME...]` short form of a campaign's fault rules (`faults`)."""

from __future__ import annotations

from kaudit._require import require_probability
from kaudit.errors import InputError
from kaudit.spec import FaultRule
from kaudit.spec._faults import FAULT_KINDS


def parse_faults(text: str) -> tuple[FaultRule, ...]:
    """Rules from `NAME[:RATE]` items separated by commas; a missing rate means 1.

    Raises `InputError` (argument `faults`) naming the item when a name is unknown or
    a rate is not a number in (0, 1].
    """
    rules: list[FaultRule] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, _, rate_text = item.partition(":")
        if name not in FAULT_KINDS:
            raise InputError(
                "faults", f"names an unknown fault {name!r}; choose from {', '.join(FAULT_KINDS)}"
            )
        try:
            rate = float(rate_text) if rate_text else 1.0
        except ValueError:
            raise InputError(
                "faults", f"gives {name} a rate that is not a number: {rate_text!r}"
            ) from None
        require_probability("faults", rate, one=True, part=f"gives {name} a rate that")
        rules.append(FaultRule(kind=name, rate=rate))
    if not rules:
        raise InputError("faults", "names no fault; give at least one")
    return tuple(rules)
