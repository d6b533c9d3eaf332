"""Random mutations of valid hand-written files never escape the loaders as a crash.

Each loader (task, identity, gate policy, model config, prereg, monitor event line)
either returns its model or raises kaudit's own error naming the file; a TypeError,
RecursionError, MemoryError or any other exception is a bug the corpus did not foresee.
Mutations work on the text (characters YAML and JSON treat specially, spliced in) and on
the parsed data (a node replaced by a hostile value), so both the reader and the models
see input nobody wrote by hand.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaudit.agents.chat import load_model_config
from kaudit.errors import KauditError
from kaudit.gate import load_policy
from kaudit.monitor._events import read_events
from kaudit.spec import Identity, read_yaml
from kaudit.spec._load import load_task, validate_file_data
from kaudit.stats import freeze_prereg
from kaudit.suites._conform import schema_problems
from tests.conftest import FIXTURES
from tests.mini_world import build

TASK = (FIXTURES / "mini_suite" / "close_account.yaml").read_text()
IDENTITY = (FIXTURES / "hostile" / "identity" / "good.yaml").read_text()
POLICY = (Path(__file__).parents[2] / "src/kaudit/gate/default_policy.yaml").read_text()
MODEL = "provider: openai\nname: m\ntemperature: 0.2\nmax_tokens: 256\ntimeout_s: 30\n"
PREREG = """version: 1
title: demo
alpha: 0.05
eps: 0.05
bootstrap: 500
seed: 1
pools:
  dev: {}
power: {min_cells: 2, min_runs_per_cell: 8}
claims: []
"""
EVENT = '{"task": "t", "model": "m", "harm": true, "time": 3, "group": "g", "dollars": 12.5}'

SPECIAL = [
    "\udce9",  # written with surrogatepass: a byte that is not UTF-8
    "9" * 5000,  # past Python's 4,300-digit limit on int()
    "[" * 70,  # past the nesting limit
    *"\0&*[]{}:,-?|>!%@`'\"#\n\t\\~",
    *("\ufeff", "\u2028", "<<: ", "!!python/name:x"),
]
HOSTILE_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.binary(max_size=8),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    st.recursive(st.just(1), lambda inner: st.lists(inner, max_size=2), max_leaves=200),
)


def _image() -> bytes:
    conn = sqlite3.connect(":memory:")
    build(conn)
    image = conn.serialize()
    conn.close()
    return image


IMAGE = _image()


@st.composite
def text_mutation(draw: st.DrawFn, original: str) -> str:
    """`original` with a few characters deleted, replaced or inserted (specials favoured)."""
    text = original
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        special = draw(st.integers(0, 3)) > 0
        piece = draw(st.sampled_from(SPECIAL) if special else st.text(max_size=3))
        cut = draw(st.integers(0, 3))
        text = text[:at] + piece + text[at + cut :]
    return text


def _paths(data: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [here]
    if isinstance(data, dict):
        for key, value in data.items():
            found += _paths(value, (*here, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found += _paths(value, (*here, i))
    return found


@st.composite
def data_mutation(draw: st.DrawFn, original: str) -> str:
    """`original` parsed, one node replaced by a hostile value, dumped back as YAML."""
    data = yaml.safe_load(original)
    path = draw(st.sampled_from(_paths(data)[1:]))
    value = draw(HOSTILE_VALUES)
    target = data
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return yaml.safe_dump(data, allow_unicode=True)


def mutations(original: str) -> st.SearchStrategy[str]:
    return st.one_of(text_mutation(original), data_mutation(original))


def _in_file(text: str, load: Callable[[Path], Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "file.yaml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        with contextlib.suppress(KauditError):
            load(path)


def _task(path: Path) -> None:
    task = load_task(path)
    schema_problems(task, IMAGE)  # the load-time world check sees the mutated task too


LOADERS: dict[str, tuple[str, Callable[[Path], Any]]] = {
    "task": (TASK, _task),
    "identity": (IDENTITY, lambda p: validate_file_data(Identity, read_yaml(p), p)),
    "policy": (POLICY, load_policy),
    "model-config": (MODEL, load_model_config),
    "prereg": (PREREG, freeze_prereg),  # parses the file, then writes its lock beside it
}
FAST = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,  # the same examples in every CI run
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize("kind", list(LOADERS))
def test_a_mutated_file_loads_or_raises_a_kaudit_error(kind: str) -> None:
    """Fails if any loader lets a TypeError, RecursionError, UnicodeError or pydantic's
    own exception through: with `decode_utf8` catching nothing, the spliced byte 0xed
    escaped as UnicodeDecodeError (tried by hand)."""
    original, load = LOADERS[kind]

    @FAST
    @given(text=mutations(original))
    def check(text: str) -> None:
        _in_file(text, load)

    check()


@st.composite
def event_mutation(draw: st.DrawFn) -> str:
    data = json.loads(EVENT)
    if draw(st.booleans()):
        return draw(text_mutation(EVENT))
    key = draw(st.sampled_from([*data, "extra"]))
    value = draw(HOSTILE_VALUES)
    data[key] = value.decode("latin-1") if isinstance(value, bytes) else value
    return json.dumps(data)


@FAST
@given(line=event_mutation())
def test_a_mutated_event_line_reads_or_raises_an_event_error(line: str) -> None:
    """Fails if a mutated line escapes `read_events` as anything but an EventError, or a
    read event carries non-finite or out-of-range dollars (sums became JSON null)."""
    try:
        events = list(read_events([line], "events.jsonl"))
    except KauditError:
        return
    for event in events:
        assert event.dollars is None or 0 <= event.dollars <= 1e15
