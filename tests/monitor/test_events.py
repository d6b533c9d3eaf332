"""Event lines are read strictly: a malformed line names its source, line and field."""

from __future__ import annotations

import pytest

from kaudit.errors import EventError
from kaudit.monitor import Event
from kaudit.monitor._events import read_events


def test_events_with_every_field_and_blank_lines_read_in_order() -> None:
    """Fails if null harm were read as False, or blank lines counted as events."""
    lines = [
        '{"task": "t", "model": "m", "harm": true, "time": "2026-12-01T00:00Z", "dollars": 12.5}',
        "",
        '{"task": "t", "model": "m", "harm": null, "group": "eu", "time": 3}',
    ]
    assert list(read_events(lines, "e.jsonl")) == [
        Event("t", "m", True, time="2026-12-01T00:00Z", dollars=12.5),
        Event("t", "m", None, time=3, group="eu"),
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "e.jsonl: line 2: not JSON"),
        ('{"task": "t", "model": "m", "harm": "yes"}', "line 2: harm: must be true, false or null"),
        ('{"task": "t", "model": "m"}', "line 2: harm: missing"),
        ('{"model": "m", "harm": false}', "line 2: task: must be a non-empty string"),
        ('{"task": "t", "model": "m", "harm": false, "hram": 1}', "line 2: hram: unknown field"),
        ('{"task": "t", "model": "m", "harm": false, "dollars": -1}', "line 2: dollars: must be"),
        ('{"task": "t", "model": "m", "harm": false, "time": []}', "line 2: time: must be"),
        ("[1, 2]", "line 2: an event must be a JSON object"),
    ],
)
def test_malformed_line_is_an_event_error_naming_the_line(line: str, message: str) -> None:
    """Fails if a bad line were skipped, defaulted, or reported without its number."""
    good = '{"task": "t", "model": "m", "harm": false}'
    with pytest.raises(EventError) as caught:
        list(read_events([good, line], "e.jsonl"))
    assert message in str(caught.value)
    assert caught.value.line == 2


def test_event_round_trips_through_its_json() -> None:
    """Fails if to_json dropped or renamed a field the reader expects."""
    event = Event("t", "m", None, time=1.5, group="g", dollars=3.0)
    import json

    assert list(read_events([json.dumps(event.to_json())], "x")) == [event]
