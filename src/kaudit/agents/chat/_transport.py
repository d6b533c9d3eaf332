"""The HTTP transport under the SDK clients: aiohttp when the SDK offers it, else httpx.

Both official SDKs ship an aiohttp-backed client (`DefaultAioHttpClient`) beside their
default httpx one. With a hundred runs in flight its per-request CPU is about half of
httpx's (h11, httpcore's scan of its connection pool and anyio's socket layer are most
of a reply's cost; docs/scaling.md has the measurements), and that CPU is what keeps a
model-bound campaign from overlapping its waits. Errors still arrive as the SDK's own
exception classes, so retries and their classification do not depend on the transport.
"""

from __future__ import annotations

import importlib.util
from types import ModuleType
from typing import Any, Literal

from kaudit.errors import KauditError

HttpBackend = Literal["auto", "aiohttp", "httpx"]
"""`auto` takes aiohttp when the SDK has its aiohttp client and aiohttp is installed."""


def resolve_backend(sdk: ModuleType, backend: HttpBackend) -> Literal["aiohttp", "httpx"]:
    """The transport a client of `sdk` will use; `KauditError` if `aiohttp` cannot be had."""
    if backend == "httpx":
        return "httpx"
    has_client = hasattr(sdk, "DefaultAioHttpClient")
    has_aiohttp = importlib.util.find_spec("aiohttp") is not None
    if has_client and has_aiohttp:
        return "aiohttp"
    if backend == "auto":
        return "httpx"
    missing = "aiohttp is not installed" if has_client else f"{sdk.__name__} has no aiohttp client"
    raise KauditError(f"http_backend 'aiohttp': {missing} (pip install '{sdk.__name__}[aiohttp]')")


def http_client(sdk: ModuleType, backend: HttpBackend) -> Any | None:
    """The SDK's aiohttp client, or None to let the SDK build its default httpx one."""
    if resolve_backend(sdk, backend) == "httpx":
        return None
    return sdk.DefaultAioHttpClient()


def backend_in_use(client: Any) -> Literal["aiohttp", "httpx"]:
    """Which transport a built SDK client sends through (its inner HTTP client's class)."""
    inner = getattr(client, "_client", None)
    is_aiohttp = any("Aiohttp" in cls.__name__ for cls in type(inner).__mro__)
    return "aiohttp" if is_aiohttp else "httpx"
