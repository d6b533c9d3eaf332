"""Model configs: API, model, sampling, prices and retry policy, from YAML or `openai:NAME`.

A config file is what makes a real-model campaign reproducible and its bill explicable, so
it is a strict pydantic model (`extra="forbid"`) that names the environment variable
holding the key, never the key itself.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kaudit._usage import Usage
from kaudit.agents.chat._transport import HttpBackend
from kaudit.errors import KauditError, SpecError
from kaudit.spec import read_yaml

Provider = Literal["openai", "anthropic"]

DEFAULT_KEY_ENV: dict[str, str] = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
_SECRET_NAME = re.compile(r"(key|token|secret|password|authorization)", re.IGNORECASE)
_SAFE_NAMES = {"api_key_env", "max_tokens", "max_tokens_param"}


class Price(BaseModel):
    """US dollars per million tokens, as the provider bills them."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    input: float = Field(0.0, ge=0, description="USD per million input (prompt) tokens.")
    output: float = Field(0.0, ge=0, description="USD per million output (completion) tokens.")

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """Dollars for one call's tokens."""
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000

    def priced(self, usage: Usage) -> Usage:
        """`usage` with its tokens' cost in place of the one it had."""
        return replace(usage, cost_usd=self.cost(usage.input_tokens, usage.output_tokens))


class ModelConfig(BaseModel):
    """One model under audit and how to reach it. Load from YAML with `load_model_config`."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    provider: Provider = Field(description="'openai' (any Chat Completions server) or 'anthropic'.")
    name: str = Field(min_length=1, description="Model name as the API expects it.")
    label: str | None = Field(
        None,
        description="Ledger model key; defaults to 'PROVIDER:NAME'. Use it to tell "
        "two deployments of the same model apart.",
    )
    base_url: str | None = Field(None, description="API base URL (vLLM, Ollama, OpenRouter…).")
    api_key_env: str | None = Field(
        None, description="Environment variable holding the key (default per provider)."
    )
    temperature: float | None = Field(
        0.6, ge=0, description="Sampling temperature, recorded per run; null sends none."
    )
    top_p: float | None = Field(None, gt=0, le=1, description="Nucleus sampling, when set.")
    max_tokens: int = Field(1024, ge=1, description="Output tokens per reply.")
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = Field(
        "max_tokens",
        description="OpenAI-compatible name of the limit (newer OpenAI models "
        "want 'max_completion_tokens').",
    )
    send_seed: bool = Field(True, description="Send each run's seed (OpenAI `seed`).")
    price: Price = Field(default_factory=Price, description="Prices for the cost accounting.")
    timeout_s: float = Field(120.0, gt=0, description="Per API call; a timeout is retried.")
    max_retries: int = Field(6, ge=0, description="Retries of one API call before `errored`.")
    backoff_initial_s: float = Field(1.0, ge=0, description="First retry delay (doubles).")
    backoff_max_s: float = Field(60.0, ge=0, description="Cap on any retry delay.")
    requests_per_minute: float | None = Field(
        None, gt=0, description="Cap on API calls per minute from one process."
    )
    max_concurrent_runs: int | None = Field(
        None, ge=1, description="Cap on this model's runs in flight (local executor)."
    )
    http_backend: HttpBackend = Field(
        "auto",
        description="HTTP transport under the SDK: 'aiohttp' (about half the CPU per "
        "request at high concurrency), 'httpx' (the SDK default), or 'auto' (aiohttp "
        "when installed).",
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="Extra request fields for the serving stack."
    )
    notes: str | None = Field(None, description="Serving-stack notes for the manifest.")

    @field_validator("extra_body")
    @classmethod
    def _keeps_the_history(cls, value: dict[str, Any]) -> dict[str, Any]:
        if "messages" in value:
            raise ValueError("extra_body must not set 'messages': the run's history is sent")
        return value

    @property
    def key(self) -> str:
        """The ledger's model key."""
        return self.label or f"{self.provider}:{self.name}"

    def api_key(self) -> str:
        """The key from the environment; local servers (a base URL) may run without one."""
        env = self.api_key_env or DEFAULT_KEY_ENV[self.provider]
        value = os.environ.get(env)
        if value:
            return value
        if self.base_url is not None and self.api_key_env is None:
            return "not-needed"  # vLLM, Ollama and llama.cpp accept any key
        raise KauditError(f"model {self.key}: environment variable {env} is not set")

    def describe(self) -> dict[str, Any]:
        """The config for the provenance manifest, with secrets and URL credentials redacted."""
        data: dict[str, Any] = redact(self.model_dump(mode="json"))
        if self.base_url:
            data["base_url"] = _strip_credentials(self.base_url)
        data["key"] = self.key
        data["kind"] = "chat"
        data["simulated"] = False
        return data


def redact(value: Any) -> Any:
    """A copy with every field whose name looks secret (key, token, …) replaced."""
    if isinstance(value, dict):
        return {
            k: "<redacted>" if _SECRET_NAME.search(k) and k not in _SAFE_NAMES else redact(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def _strip_credentials(url: str) -> str:
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def load_model_config(path: Path | str, **overrides: Any) -> ModelConfig:
    """Read a YAML model config; `overrides` that are not None replace file values.

    Raises `SpecError` naming the file and the first bad field.
    """
    path = Path(path)
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise SpecError(path, "file", "expected a mapping of config fields")
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return ModelConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "file"
        raise SpecError(path, field, first["msg"]) from None


def short_config(provider: Provider, name: str, **overrides: Any) -> ModelConfig:
    """The config of `openai:NAME` / `anthropic:NAME` plus command-line overrides."""
    if not name:
        raise KauditError(f"model spec '{provider}:' needs a model name, e.g. '{provider}:NAME'")
    data: dict[str, Any] = {"provider": provider, "name": name}
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return ModelConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise KauditError(f"model {provider}:{name}: {first['loc']}: {first['msg']}") from None
