"""A scripted upstream (kaudit's chat test server) and a proxy in front of it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kaudit.agents.chat import Price
from kaudit.agents.chat.testserver import Call, ChatTestServer, Persona, Reply

PRICE = Price(input=3.0, output=15.0)
"""USD per million tokens of the priced model `bot`."""

LOOKUP_THEN_REFUSE = (
    Reply(content="Looking it up.", calls=(Call("get_order", {"id": 3}),)),
    Reply(content="REFUSAL: I will not do that."),
)


@pytest.fixture(scope="module")
def upstream() -> Iterator[ChatTestServer]:
    """`bot` (priced) and `free` (unpriced) propose a lookup then refuse; `flaky` answers
    its first attempt at each turn with HTTP 500."""
    personas = {
        "bot": Persona.single(LOOKUP_THEN_REFUSE),
        "free": Persona.single(LOOKUP_THEN_REFUSE),
        "flaky": Persona.single(LOOKUP_THEN_REFUSE, faults=("500",)),
    }
    with ChatTestServer(personas, keep_bodies=True) as server:
        yield server
