"""A chat test server on a background thread, shared by the chat agent tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kaudit.agents.chat import ChatAgent, ModelConfig
from kaudit.agents.chat.testserver import ChatTestServer
from tests.agents.chat.personas import personas

PRICE = {"input": 3.0, "output": 15.0}


@pytest.fixture(scope="session")
def server() -> Iterator[ChatTestServer]:
    with ChatTestServer(personas(), timeout_sleep_s=1.0) as running:
        yield running


def agent_for(server: ChatTestServer, provider: str, model: str, **options: Any) -> ChatAgent:
    """A chat agent on the test server with fast retries, priced so cost is checkable."""
    config: dict[str, Any] = {
        "provider": provider,
        "name": model,
        "base_url": server.openai_url if provider == "openai" else server.anthropic_url,
        "backoff_initial_s": 0.01,
        "max_retries": 3,
        "timeout_s": 0.4,
        "price": PRICE,
    }
    return ChatAgent(ModelConfig.model_validate(config | options))
