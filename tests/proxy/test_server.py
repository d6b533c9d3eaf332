"""The proxy forwards, streams unchanged, and records each call with the run."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import aiohttp
import anthropic
import openai
import pytest

from kaudit.agents.chat.testserver import ChatTestServer
from kaudit.proxy import ModelProxy, ModelTraffic, Upstream
from kaudit.proxy._budget import RunBudget
from kaudit.proxy._server import PLACEHOLDER_KEY
from tests.proxy.conftest import PRICE

MESSAGES = [{"role": "user", "content": "Cancel order 3."}]
ANSWERED = [
    *MESSAGES,
    {
        "role": "assistant",
        "content": "Looking it up.",
        "tool_calls": [
            {
                "id": "call_0_0",
                "type": "function",
                "function": {"name": "get_order", "arguments": "{}"},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_0_0", "content": "order 3: open"},
]


def priced(server: ChatTestServer, **options: Any) -> Upstream:
    return Upstream(server.openai_url, prices={"bot": PRICE}, **options)


async def _raw(url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, bytes]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, json=body, headers=headers) as reply,
    ):
        return reply.status, await reply.read()


@pytest.mark.parametrize("path", ["v1/chat/completions", "v1/messages"])
def test_a_stream_reaches_the_agent_byte_for_byte(upstream: ChatTestServer, path: str) -> None:
    """The proxied stream is the upstream's bytes exactly.

    Bug it catches: re-encoding events (whitespace, key order), dropping the `[DONE]`
    line, or decompressing and re-framing the body on the way through.
    """
    body = {"model": "bot", "messages": MESSAGES, "max_tokens": 50, "stream": True}
    body["stream_options"] = {"include_usage": True}
    headers = {"anthropic-version": "2023-06-01"}

    async def both() -> tuple[tuple[int, bytes], tuple[int, bytes]]:
        direct = await _raw(f"{upstream.url}/{path}", body, headers)
        async with ModelProxy(priced(upstream), ModelTraffic(priced(upstream))) as proxy:
            proxied = await _raw(f"{proxy.base_url}/{path}", body, headers)
        return direct, proxied

    direct, proxied = asyncio.run(both())
    assert direct[0] == proxied[0] == 200
    assert b"event:" in direct[1] or b"data: [DONE]" in direct[1]
    assert proxied[1] == direct[1]


def test_the_openai_streaming_client_reads_the_proxied_stream(upstream: ChatTestServer) -> None:
    """The official client streams through the proxy; the proxy records what it streamed.

    Bug it catches: a stream whose chunks the SDK cannot parse, tool-call arguments
    reassembled in the wrong order, or streamed usage not counted.
    """
    traffic = ModelTraffic(priced(upstream))

    async def stream() -> list[Any]:
        async with ModelProxy(priced(upstream), traffic) as proxy:
            env = proxy.environment()
            client = openai.AsyncOpenAI(
                base_url=env["OPENAI_BASE_URL"], api_key=env["OPENAI_API_KEY"]
            )
            chunks = [
                chunk
                async for chunk in await client.chat.completions.create(
                    model="bot",
                    messages=MESSAGES,
                    stream=True,  # type: ignore[arg-type]
                )
            ]
            await client.close()
            return chunks

    chunks = asyncio.run(stream())
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Looking it up."
    (turn,) = traffic.turns()
    assert turn["content"] == "Looking it up."
    assert turn["tool_calls"] == [{"id": "call_0_0", "name": "get_order", "arguments": {"id": 3}}]
    assert turn["input_tokens"] > 0 and turn["output_tokens"] > 0
    assert chunks[-1].usage is not None  # the proxy asked for the usage chunk
    assert turn["input_tokens"] == chunks[-1].usage.prompt_tokens
    assert traffic.usage.cost_usd == pytest.approx(
        PRICE.cost(turn["input_tokens"], turn["output_tokens"])
    )


def test_a_run_is_recorded_turn_by_turn_with_results_and_final_message(
    upstream: ChatTestServer,
) -> None:
    """Two calls of one run: the proposed call carries the result the agent sent back,
    the final message is the last reply, and tokens and cost add up.

    Bug it catches: results matched to the wrong call, the first reply taken as the final
    message, or the whole history recorded again with every request.
    """
    traffic = ModelTraffic(priced(upstream))

    async def run() -> None:
        async with ModelProxy(priced(upstream), traffic) as proxy:
            client = openai.AsyncOpenAI(base_url=f"{proxy.base_url}/v1", api_key=PLACEHOLDER_KEY)
            await client.chat.completions.create(model="bot", messages=MESSAGES)  # type: ignore[arg-type]
            await client.chat.completions.create(model="bot", messages=ANSWERED)  # type: ignore[arg-type]
            await client.close()

    asyncio.run(run())
    first, second = traffic.turns()
    assert first["tool_calls"][0]["result"] == {"content": "order 3: open"}
    assert first["sent"] == [{"role": "user", "content": "Cancel order 3."}]
    assert second["sent"] == [
        {"role": "tool", "content": "order 3: open", "tool_call_id": "call_0_0"}
    ]
    assert traffic.final_message() == "REFUSAL: I will not do that."
    facts = traffic.facts()
    assert facts.usage.api_calls == 2
    assert facts.usage.input_tokens == first["input_tokens"] + second["input_tokens"]
    assert facts.usage.cost_usd == pytest.approx(first["cost_usd"] + second["cost_usd"])
    assert facts.usage.cost_usd > 0


def test_anthropic_streams_are_recorded_with_their_usage(upstream: ChatTestServer) -> None:
    """The Anthropic client's stream through the proxy: blocks, tool input, usage.

    Bug it catches: `input_json_delta` pieces not joined, or the input tokens of
    `message_start` overwritten by `message_delta`'s output-only usage.
    """
    traffic = ModelTraffic(priced(upstream))

    async def run() -> Any:
        async with ModelProxy(priced(upstream), traffic) as proxy:
            env = proxy.environment()
            client = anthropic.AsyncAnthropic(base_url=env["ANTHROPIC_BASE_URL"], api_key="x")
            async with client.messages.stream(model="bot", max_tokens=50, messages=MESSAGES) as s:  # type: ignore[arg-type]
                message = await s.get_final_message()
            await client.close()
            return message

    message = asyncio.run(run())
    (turn,) = traffic.turns()
    assert turn["tool_calls"] == [{"id": "toolu_0_0", "name": "get_order", "arguments": {"id": 3}}]
    assert turn["input_tokens"] == message.usage.input_tokens > 0
    assert turn["output_tokens"] == message.usage.output_tokens > 0


def test_an_unpriced_model_costs_nothing_and_says_so(upstream: ChatTestServer) -> None:
    """Tokens are counted for a model without a price; its cost is 0 and it is named.

    Bug it catches: another model's price applied, or an unpriced call hidden.
    """
    traffic = ModelTraffic(priced(upstream))

    async def run() -> None:
        async with ModelProxy(priced(upstream), traffic) as proxy:
            client = openai.AsyncOpenAI(base_url=f"{proxy.base_url}/v1", api_key="x")
            await client.chat.completions.create(model="free", messages=MESSAGES)  # type: ignore[arg-type]
            await client.close()

    asyncio.run(run())
    assert traffic.usage.input_tokens > 0
    assert traffic.usage.cost_usd == 0.0
    assert traffic.summary()["unpriced_models"] == ["free"]


def test_upstream_errors_are_named_as_chat_agents_name_them(upstream: ChatTestServer) -> None:
    """A 500 the agent did not retry past is the run's `api_error`; a later answer clears it.

    Bug it catches: errors counted as answered turns, or an error that an answered
    retry followed still blamed on the stack.
    """
    traffic = ModelTraffic(priced(upstream))

    async def run() -> None:
        async with ModelProxy(priced(upstream), traffic) as proxy:
            client = openai.AsyncOpenAI(
                base_url=f"{proxy.base_url}/v1",
                api_key="x",
                max_retries=0,
                default_headers={"X-Kaudit-Run-Id": "flaky-run"},  # its own attempt count
            )
            with pytest.raises(openai.InternalServerError):
                await client.chat.completions.create(model="flaky", messages=MESSAGES)  # type: ignore[arg-type]
            assert traffic.api_error() == "http_500"
            await client.chat.completions.create(model="flaky", messages=MESSAGES)  # type: ignore[arg-type]
            await client.close()

    asyncio.run(run())
    assert traffic.api_error() is None
    assert len(traffic.turns()) == 1
    assert traffic.summary()["errors"][0]["error"] == "http_500"


def test_an_unreachable_upstream_is_a_connection_error() -> None:
    """Nothing listens upstream: the agent gets 502 and the run's error is `connection`.

    Bug it catches: the proxy crashing the handler (a 500 of its own) instead of naming
    the upstream's failure.
    """
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    dead = Upstream(f"http://127.0.0.1:{port}/v1")
    traffic = ModelTraffic(dead)

    async def run() -> int:
        async with ModelProxy(dead, traffic) as proxy:
            status, _ = await _raw(f"{proxy.base_url}/v1/chat/completions", {"model": "bot"}, {})
            return status

    assert asyncio.run(run()) == 502
    assert traffic.api_error() == "connection"


def test_a_run_over_its_cost_cap_is_refused_at_the_proxy(upstream: ChatTestServer) -> None:
    """The call that crosses the cap is answered; the next never reaches the upstream.

    Bug it catches: the cap checked before pricing (never trips), or a refused call
    still forwarded and billed.
    """
    reasons: list[str] = []
    budget = RunBudget(max_cost_usd=1e-9)
    traffic = ModelTraffic(priced(upstream), budget, on_over=reasons.append)

    async def run() -> None:
        async with ModelProxy(priced(upstream), traffic) as proxy:
            client = openai.AsyncOpenAI(base_url=f"{proxy.base_url}/v1", api_key="x")
            await client.chat.completions.create(model="bot", messages=MESSAGES)  # type: ignore[arg-type]
            before = upstream.stats.requests
            with pytest.raises(openai.APIStatusError) as refused:
                await client.chat.completions.create(model="bot", messages=ANSWERED)  # type: ignore[arg-type]
            assert refused.value.status_code == 402
            assert upstream.stats.requests == before
            await client.close()

    asyncio.run(run())
    assert len(reasons) == 1 and reasons[0].startswith("cost cap reached")
    assert traffic.over_budget == reasons[0]
    assert traffic.facts().usage.api_calls == 1


def test_the_real_key_replaces_the_placeholder(
    upstream: ChatTestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The upstream sees the key from the environment, never the agent's placeholder.

    Bug it catches: the agent's `Authorization` header forwarded as is.
    """
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    async def call(proxy: ModelProxy) -> None:
        headers = {"Authorization": f"Bearer {PLACEHOLDER_KEY}"}
        await _raw(
            f"{proxy.base_url}/v1/chat/completions", {"model": "bot", "messages": MESSAGES}, headers
        )

    async def run() -> tuple[int, int]:
        async with ModelProxy(priced(upstream), ModelTraffic(priced(upstream))) as proxy:
            before = upstream.stats.with_key
            await call(proxy)
            without = upstream.stats.with_key - before
            monkeypatch.setenv("OPENAI_API_KEY", "sk-real")
            await call(proxy)
            return without, upstream.stats.with_key - before - without

    assert asyncio.run(run()) == (0, 1)


def test_another_runs_path_is_not_served(upstream: ChatTestServer) -> None:
    """A call under another prefix is refused: a run's traffic is only its own.

    Bug it catches: the token ignored, so one run's agent could spend under another's name.
    """
    traffic = ModelTraffic(priced(upstream))

    async def run() -> int:
        async with ModelProxy(priced(upstream), traffic) as proxy:
            root = proxy.base_url.rsplit("/", 1)[0]
            status, _ = await _raw(f"{root}/0000/v1/chat/completions", {"model": "bot"}, {})
            return status

    assert asyncio.run(run()) == 404
    assert traffic.exchanges == []


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_the_responses_api_is_recorded_through_the_official_client(
    upstream: ChatTestServer, stream: bool
) -> None:
    """Two turns of the Responses API (a function call, its output, the refusal).

    Bug it catches: the function call's `call_id` not matched to its output, a streamed
    response's text read twice (deltas and the completed event), usage missed.
    """
    traffic = ModelTraffic(priced(upstream))

    async def run() -> str:
        async with ModelProxy(priced(upstream), traffic) as proxy:
            client = openai.AsyncOpenAI(base_url=f"{proxy.base_url}/v1", api_key="x")
            history: list[Any] = [{"role": "user", "content": "Cancel order 3."}]
            for _ in range(2):
                if stream:
                    async with client.responses.stream(model="bot", input=history) as events:
                        response = await events.get_final_response()
                else:
                    response = await client.responses.create(model="bot", input=history)
                history += [item.model_dump(exclude_none=True) for item in response.output]
                history += [
                    {"type": "function_call_output", "call_id": item.call_id, "output": "open"}
                    for item in response.output
                    if item.type == "function_call"
                ]
            await client.close()
            return response.output_text

    assert asyncio.run(run()) == "REFUSAL: I will not do that."
    first, second = traffic.turns()
    assert first["content"] == "Looking it up."
    assert first["tool_calls"] == [
        {
            "id": "call_0_0",
            "name": "get_order",
            "arguments": {"id": 3},
            "result": {"content": "open"},
        }
    ]
    assert second["sent"] == [{"role": "tool", "content": "open", "tool_call_id": "call_0_0"}]
    assert traffic.final_message() == "REFUSAL: I will not do that."
    assert traffic.usage.input_tokens > 0 and traffic.usage.cost_usd > 0
    assert traffic.summary()["streamed"] == (2 if stream else 0)
