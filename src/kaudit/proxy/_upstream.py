"""The upstream model server the proxy forwards to, its keys and its prices."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from kaudit.agents.chat._config import (
    DEFAULT_KEY_ENV,
    Price,
    _strip_credentials,
    load_model_config,
)
from kaudit.errors import KauditError

__all__ = ["Upstream", "upstream_from"]

UPSTREAM_TIMEOUT_S = 600.0
"""How long one upstream call may go silent before it is a `timeout`."""


@dataclass(frozen=True)
class Upstream:
    """Where model calls go: an OpenAI-compatible server, the Anthropic API, or both.

    `url` is the root the agent's `/v1/...` paths are appended to (a trailing `/v1` is
    dropped, so `http://host:8000/v1` and `http://host:8000` are the same upstream).
    Keys are read from the environment when a call is forwarded, never stored; `prices`
    name the models that have one (an unpriced model's calls cost 0 and say so).
    """

    url: str
    key_env: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_KEY_ENV))
    prices: Mapping[str, Price] = field(default_factory=dict)
    model: str | None = None
    """The model the agent should ask for, when the upstream's config names one."""
    timeout_s: float = UPSTREAM_TIMEOUT_S

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise KauditError(f"upstream {self.url!r}: not an http(s) URL")
        root = self.url.rstrip("/")
        object.__setattr__(self, "url", root[: -len("/v1")] if root.endswith("/v1") else root)

    def target(self, path: str) -> str:
        """The upstream URL of an agent's path (`v1/chat/completions`)."""
        return f"{self.url}/{path}"

    def key(self, provider: Literal["openai", "anthropic"]) -> str | None:
        """The real key for `provider`'s calls, when its variable is set."""
        return os.environ.get(self.key_env.get(provider, DEFAULT_KEY_ENV[provider])) or None

    def price(self, model: str | None) -> Price | None:
        """The price of `model`'s tokens, None when it has none."""
        return None if model is None else self.prices.get(model)

    def describe(self) -> dict[str, Any]:
        """For the manifest: the URL without credentials, the key variables, the prices."""
        return {
            "url": _strip_credentials(self.url),
            "api_key_env": dict(self.key_env),  # variable names; redaction spares this key
            "prices": {name: price.model_dump() for name, price in self.prices.items()},
            "model": self.model,
        }


def upstream_from(spec: str, timeout_s: float | None = None) -> Upstream:
    """An upstream from a URL, or from a chat model config file.

    A config (the same file `--model` takes) gives the URL (`base_url`), the key's
    variable and the model's `price`.
    """
    timeout = UPSTREAM_TIMEOUT_S if timeout_s is None else timeout_s
    if not spec.endswith((".yaml", ".yml")):
        return Upstream(spec, timeout_s=timeout)
    config = load_model_config(Path(spec))
    if config.base_url is None:
        raise KauditError(f"{spec}: base_url: the upstream's config needs the server's URL")
    key_env = dict(DEFAULT_KEY_ENV)
    if config.api_key_env:
        key_env[config.provider] = config.api_key_env
    return Upstream(
        config.base_url,
        key_env=key_env,
        prices={config.name: config.price},
        model=config.name,
        timeout_s=timeout,
    )
