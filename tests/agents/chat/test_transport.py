"""The HTTP transport under the SDKs: aiohttp by default, httpx on request, same records."""

from __future__ import annotations

import asyncio
import types
from pathlib import Path

import anthropic
import openai
import pytest

from kaudit.agents.chat._transport import backend_in_use, resolve_backend
from kaudit.agents.chat.testserver import ChatTestServer
from kaudit.errors import KauditError
from kaudit.harness import CampaignPlan, run_campaign
from kaudit.ledger import Ledger
from kaudit.suites import Suite
from tests.agents.chat.conftest import agent_for


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("backend", ["aiohttp", "httpx"])
def test_each_transport_retries_the_same_faults_into_the_same_records(
    provider: str, backend: str, server: ChatTestServer, mini_suite: Suite, tmp_path: Path
) -> None:
    """Every turn fails with a 500, a 429 and a timeout before it succeeds, on either
    transport. Fails if `http_backend` is ignored (tried: `make_client` always passing
    "auto") or if a transport's errors stop mapping onto the SDK's retryable ones (the runs
    would end `errored` instead of passing after 9 retries)."""
    agent = agent_for(server, provider, "flaky", http_backend=backend)
    with Ledger(tmp_path / "l.sqlite") as ledger:

        async def campaign() -> str:
            client = agent._client()  # the one client this loop's runs share
            # a campaign name of its own: the server counts attempts per run id
            plan = CampaignPlan(f"transport-{backend}", k=2)
            await run_campaign(plan, mini_suite, [agent], ledger)
            return backend_in_use(client)

        used = asyncio.run(campaign())
        records = list(ledger.records())
    assert used == backend == agent.http_backend
    assert [(r.outcome, r.retries, r.extra["api_calls"]) for r in records] == [("PASS", 9, 12)] * 2


@pytest.mark.parametrize("sdk", [openai, anthropic])
def test_auto_takes_aiohttp_when_the_sdk_offers_it(sdk: types.ModuleType) -> None:
    assert resolve_backend(sdk, "auto") == "aiohttp"
    assert resolve_backend(sdk, "httpx") == "httpx"


def test_an_sdk_without_an_aiohttp_client_falls_back_or_is_a_setup_error() -> None:
    """An older SDK (no `DefaultAioHttpClient`) keeps httpx under `auto`; asking for aiohttp
    explicitly names what is missing instead of failing every run later."""
    old_sdk = types.ModuleType("openai")
    assert resolve_backend(old_sdk, "auto") == "httpx"
    with pytest.raises(KauditError, match="openai has no aiohttp client"):
        resolve_backend(old_sdk, "aiohttp")
