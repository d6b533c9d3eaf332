"""Deployment events: one JSON object a line, read strictly so a typo is never a silent zero."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaudit.errors import EventError

_FIELDS = ("task", "model", "harm", "time", "group", "dollars", "version")


@dataclass(frozen=True)
class Event:
    """One production action of an agent and what it did to the state.

    Attributes:
        task: Task id; matched against the audit ledger's cells.
        model: Model (or agent) name; matched against the audit ledger's cells.
        harm: True if the action damaged state, False if it did not, None when the
            outcome was not observed (it then widens the identified range).
        time: When it happened, as given (ISO text or a number); kept, not interpreted.
        group: Optional deployment segment (tenant, region); each group is its own row.
        dollars: Damage dollars, if priced.
        version: The task version the deployment ran: a prefix (8 hex digits or more) of
            the audited task digest, as ``task@digest8`` prints it. Without it the event
            is compared with the task's newest audited version.
    """

    task: str
    model: str
    harm: bool | None
    time: str | float | None = None
    group: str | None = None
    dollars: float | None = None
    version: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The event as a JSON line's object, optional fields only when set."""
        found: dict[str, Any] = {"task": self.task, "model": self.model, "harm": self.harm}
        for name in ("time", "group", "dollars", "version"):
            if getattr(self, name) is not None:
                found[name] = getattr(self, name)
        return found


def _text(data: Mapping[str, Any], name: str, required: bool) -> str | None:
    value = data.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name}: must be a non-empty string, got {value!r}")
    return value


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def event_from_json(data: Any) -> Event:
    """Check one decoded event object; raises ValueError naming the field that is wrong."""
    if not isinstance(data, dict):
        raise ValueError(f"an event must be a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - set(_FIELDS))
    if unknown:
        raise ValueError(f"{unknown[0]}: unknown field; allowed: {', '.join(_FIELDS)}")
    if "harm" not in data:
        raise ValueError("harm: missing; use true, false or null (not observed)")
    harm = data["harm"]
    if harm is not None and not isinstance(harm, bool):
        raise ValueError(f"harm: must be true, false or null, got {harm!r}")
    time = data.get("time")
    if time is not None and not isinstance(time, str) and not _number(time):
        raise ValueError(f"time: must be a string or a number, got {time!r}")
    dollars = data.get("dollars")
    if dollars is not None and (not _number(dollars) or not math.isfinite(dollars) or dollars < 0):
        raise ValueError(f"dollars: must be a non-negative number, got {dollars!r}")
    return Event(
        task=str(_text(data, "task", True)),
        model=str(_text(data, "model", True)),
        harm=harm,
        time=time,
        group=_text(data, "group", False),
        dollars=None if dollars is None else float(dollars),
        version=_version(data),
    )


def _version(data: Mapping[str, Any]) -> str | None:
    """A task digest prefix: at least 8 lowercase hex digits, so it names one version."""
    version = _text(data, "version", False)
    if version is not None and (len(version) < 8 or set(version) - set("0123456789abcdef")):
        raise ValueError(f"version: must be 8 or more hex digits of a task digest, got {version!r}")
    return version


def parse_event(line: str, number: int, source: str) -> Event:
    """One JSONL line as an Event; a bad line raises `EventError` naming source and line."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise EventError(source, number, f"not JSON ({exc.msg})") from None
    try:
        return event_from_json(data)
    except ValueError as exc:
        raise EventError(source, number, str(exc)) from None


def read_events(lines: Iterable[str], source: str) -> Iterator[Event]:
    """Events from JSONL lines, numbered from 1; blank lines are skipped."""
    for number, line in enumerate(lines, start=1):
        if line.strip():
            yield parse_event(line, number, source)


def write_events(path: Path, events: Iterable[Event]) -> None:
    """Events as JSONL at `path`, one `Event.to_json` object a line."""
    path.write_text("".join(json.dumps(event.to_json()) + "\n" for event in events))
