"""The proxy on a loopback port: forwards each call upstream and records it on the way.

One proxy serves one run, under a path prefix that is the run's own (`/<token>/v1/...`):
a call is attributed by where it was sent, whatever key the agent presents. The agent's
placeholder key is dropped and the real one, read from the environment, goes upstream.
A streamed reply is written to the agent chunk by chunk as it arrives, the same bytes,
and read from a copy; a whole reply is sent on before it is parsed, so recording adds
nothing to the agent's wait but the hop itself.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import time
from collections.abc import Callable
from types import TracebackType

import aiohttp
from aiohttp import web
from multidict import CIMultiDict

from kaudit.proxy._exchange import Exchange, Said, Sent
from kaudit.proxy._formats import FORMATS, ApiFormat, provider_of
from kaudit.proxy._sse import EventSplitter
from kaudit.proxy._traffic import ModelTraffic
from kaudit.proxy._upstream import Upstream

__all__ = ["PLACEHOLDER_KEY", "ModelProxy"]

PLACEHOLDER_KEY = "kaudit-model-proxy"
"""The API key an agent gets: the proxy never hands it the real one."""

_NOT_FORWARDED = frozenset(
    {
        "host", "content-length", "authorization", "x-api-key", "accept-encoding",
        "connection", "keep-alive", "proxy-authorization", "proxy-connection", "te",
        "trailer", "transfer-encoding", "upgrade",
    }
)  # fmt: skip
_NOT_RETURNED = frozenset(
    {"content-length", "connection", "keep-alive", "transfer-encoding", "date", "server"}
)


class ModelProxy:
    """Serve one run's model calls at `base_url` until the block exits.

    `traffic` receives every call; once its budget is spent, calls are refused with HTTP
    402 in the provider's error format and never reach the upstream.
    """

    def __init__(self, upstream: Upstream, traffic: ModelTraffic, host: str = "127.0.0.1"):
        self.upstream = upstream
        self.traffic = traffic
        self._host = host
        self._token = secrets.token_hex(8)
        self._port = 0
        self._session: aiohttp.ClientSession | None = None
        self._runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        """The run's root: `/v1/...` paths under it reach the upstream."""
        return f"http://{self._host}:{self._port}/{self._token}"

    def environment(self) -> dict[str, str]:
        """What the agent's SDKs read: base URLs to this proxy and placeholder keys."""
        env = {
            "OPENAI_BASE_URL": f"{self.base_url}/v1",
            "OPENAI_API_BASE": f"{self.base_url}/v1",  # older clients (LangChain, LiteLLM)
            "OPENAI_API_KEY": PLACEHOLDER_KEY,
            "ANTHROPIC_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": PLACEHOLDER_KEY,
        }
        if self.upstream.model is not None:
            env["KAUDIT_MODEL"] = self.upstream.model
        return env

    async def __aenter__(self) -> ModelProxy:
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=30, sock_read=self.upstream.timeout_s
        )
        self._session = aiohttp.ClientSession(timeout=timeout, auto_decompress=False)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{token}/{path:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            await self._runner.setup()
            sock.bind((self._host, 0))  # bound first: the URL names a port nobody can take
            self._port = sock.getsockname()[1]
            await web.SockSite(self._runner, sock).start()  # the server owns it from here
        except BaseException:
            sock.close()
            await self.__aexit__(None, None, None)  # a half-started proxy leaks nothing
            raise
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.match_info["token"] != self._token:
            return web.json_response({"error": {"message": "not this run's proxy"}}, status=404)
        path = request.match_info["path"].strip("/")
        known = FORMATS.get(path)
        body = await request.read()
        if known is None or request.method != "POST":
            return await self._forward(request, path, body, None)
        started = time.perf_counter()
        if self.traffic.over_budget is not None:
            exchange = Exchange(known.api, _sent(known, body), status=402, error="budget")
            self.traffic.record(exchange)
            error = known.error_body("budget_exceeded", f"kaudit: {self.traffic.over_budget}")
            return web.json_response(error, status=402)
        exchange = Exchange(known.api, Sent(None, False))
        forwarded = _asking_usage(body) if known.api == "chat" else body
        try:
            return await self._forward(request, path, forwarded, (known, exchange))
        finally:
            exchange.latency_ms = (time.perf_counter() - started) * 1000
            # read after the reply went out: a long history's parse is off the agent's path
            exchange.sent = _sent(known, body)
            self.traffic.record(exchange)

    async def _forward(
        self,
        request: web.Request,
        path: str,
        body: bytes,
        recording: tuple[ApiFormat, Exchange] | None,
    ) -> web.StreamResponse:
        assert self._session is not None  # set in __aenter__
        provider = provider_of(path, request.headers)
        headers = _forwarded_headers(request, self.upstream.key(provider), provider)
        try:
            upstream = await self._session.request(
                request.method,
                self.upstream.target(path),
                params=request.query,
                data=body,
                headers=headers,
            )
        except (TimeoutError, aiohttp.ClientError) as exc:
            return _unreachable(exc, recording)
        async with upstream:
            if recording is not None:
                recording[1].status = upstream.status
            response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
            response.headers.extend(
                (k, v) for k, v in upstream.headers.items() if k.lower() not in _NOT_RETURNED
            )
            try:
                if upstream.content_type == "text/event-stream":
                    await self._relay_stream(request, upstream, response, recording)
                else:
                    await self._relay_whole(request, upstream, response, recording)
            except (TimeoutError, aiohttp.ClientError) as exc:
                if recording is not None:
                    recording[1].error = _failure_kind(exc)
                raise
        return response

    async def _relay_whole(
        self,
        request: web.Request,
        upstream: aiohttp.ClientResponse,
        response: web.StreamResponse,
        recording: tuple[ApiFormat, Exchange] | None,
    ) -> None:
        data = await upstream.read()
        response.content_length = len(data)
        await response.prepare(request)
        await response.write(data)
        await response.write_eof()
        if recording is not None:
            known, exchange = recording
            _settle(exchange, upstream.status, lambda: known.said(json.loads(data)))

    async def _relay_stream(
        self,
        request: web.Request,
        upstream: aiohttp.ClientResponse,
        response: web.StreamResponse,
        recording: tuple[ApiFormat, Exchange] | None,
    ) -> None:
        await response.prepare(request)
        splitter = EventSplitter()
        reader = recording[0].stream() if recording is not None else None
        unreadable = False
        async for chunk in upstream.content.iter_any():
            await response.write(chunk)
            if reader is None or unreadable:
                continue
            try:
                for name, data in splitter.feed(chunk):
                    reader.event(name, data)
            except (ValueError, LookupError, TypeError, AttributeError):
                unreadable = True  # still passed on whole; only the recording gives up
        await response.write_eof()
        if recording is not None and reader is not None:
            read = reader.said
            _settle(recording[1], upstream.status, lambda: None if unreadable else read())


def _settle(exchange: Exchange, status: int, read: Callable[[], Said | None]) -> None:
    """Record the reply `read` returns, or what failed: an error status, an unreadable body."""
    if status >= 400:
        exchange.error = f"http_{status}"
        return
    try:
        said = read()
    except (ValueError, LookupError, TypeError, AttributeError):
        said = None
    if said is None:
        exchange.error = "unreadable_reply"
    else:
        exchange.said = said


def _sent(known: ApiFormat, body: bytes) -> Sent:
    """What the request asks; an unreadable body is forwarded all the same."""
    try:
        value = json.loads(body)
        return known.sent(value) if isinstance(value, dict) else Sent(None, False)
    except (ValueError, LookupError, TypeError, AttributeError):
        return Sent(None, False)


def _asking_usage(body: bytes) -> bytes:
    """A completion request, asking for the usage chunk if it streams and did not ask.

    Without it a Chat Completions stream carries no token counts at all. The agent then
    gets one chunk more than it asked for (empty `choices`, the usage), as every client
    that asks for usage does; a request that asks already is forwarded unchanged.
    """
    if b'"stream"' not in body:
        return body  # not streamed: parsed later, after the reply went out
    try:
        value = json.loads(body)
    except ValueError:
        return body  # the upstream will say what is wrong with it
    if not isinstance(value, dict) or value.get("stream") is not True:
        return body
    options = value.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage"):
        return body
    value["stream_options"] = (options if isinstance(options, dict) else {}) | {
        "include_usage": True
    }
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _forwarded_headers(request: web.Request, key: str | None, provider: str) -> CIMultiDict[str]:
    headers = CIMultiDict(
        (k, v) for k, v in request.headers.items() if k.lower() not in _NOT_FORWARDED
    )
    headers["Accept-Encoding"] = "identity"  # the bytes the agent gets are the upstream's
    if key is not None:
        if provider == "anthropic":
            headers["x-api-key"] = key
        else:
            headers["Authorization"] = f"Bearer {key}"
    return headers


def _failure_kind(exc: BaseException) -> str:
    """Chat agents' words: a silent upstream is a `timeout`, anything else `connection`."""
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError, aiohttp.ServerTimeoutError)):
        return "timeout"
    return "connection"


def _unreachable(
    exc: BaseException, recording: tuple[ApiFormat, Exchange] | None
) -> web.StreamResponse:
    kind = _failure_kind(exc)
    status = 504 if kind == "timeout" else 502
    message = f"kaudit model proxy: upstream {kind}: {type(exc).__name__}: {exc}"
    if recording is None:
        return web.json_response({"error": {"message": message}}, status=status)
    known, exchange = recording
    exchange.error = kind
    return web.json_response(known.error_body("api_error", message), status=status)
