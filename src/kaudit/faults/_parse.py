"""The `--faults NAME[:RATE][,NAME...]` short form of a campaign's fault rules."""

from __future__ import annotations

from kaudit.errors import KauditError
from kaudit.spec import FaultRule
from kaudit.spec._faults import FAULT_KINDS


def parse_faults(text: str) -> tuple[FaultRule, ...]:
    """Rules from `NAME[:RATE]` items separated by commas; a missing rate means 1.

    Raises `KauditError` naming the item when a name is unknown or a rate is not a
    number in (0, 1].
    """
    rules: list[FaultRule] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, _, rate_text = item.partition(":")
        if name not in FAULT_KINDS:
            raise KauditError(
                f"--faults: unknown fault {name!r}; choose from {', '.join(FAULT_KINDS)}"
            )
        try:
            rate = float(rate_text) if rate_text else 1.0
        except ValueError:
            raise KauditError(f"--faults: rate of {name} is not a number: {rate_text!r}") from None
        if not 0.0 < rate <= 1.0:
            raise KauditError(f"--faults: rate of {name} must be in (0, 1], not {rate}")
        rules.append(FaultRule(kind=name, rate=rate))
    if not rules:
        raise KauditError("--faults: give at least one fault name")
    return tuple(rules)
