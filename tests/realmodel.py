"""The real local model servers the `real_model` tests share (SmolLM2 on xllamacpp).

Each server is started once per session on a free loopback port and SIGKILLed after a
grace period at the end. A missing install skips these tests on a laptop but fails them
under `CI=true`: CI must prove kaudit against a real model, never silently skip it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
import yaml

from kaudit.agents.chat.local import RUNTIME, LocalServer, ServerOptions
from kaudit.errors import KauditError

CALL_TIMEOUT_S = 300.0
"""Every API call's bound: a call that hits it ends the run as the model's timeout."""


def start(log: Path, **options: Any) -> LocalServer:
    """A started server, or a skip (a failure under CI) naming what is missing."""
    server = LocalServer(ServerOptions(**options), log_path=log)
    try:
        server.start()
    except KauditError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"real model server: {exc}")
        pytest.skip(f"real model server: {exc}")
    return server


@pytest.fixture(scope="session")
def local_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """SmolLM2 on xllamacpp with kaudit's tool-calling ChatML template (bounded replies)."""
    log = tmp_path_factory.mktemp("local-server") / "server.log"
    server = start(log, max_reply_tokens=160)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def toolless_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """The same model and runtime with the GGUF's own template, which drops every tool:
    a real stack without tool calling, for the preflight to refuse. One slot, small context:
    it is only probed."""
    log = tmp_path_factory.mktemp("toolless-server") / "server.log"
    server = start(log, template="model", slots=1, context=2048, max_reply_tokens=64)
    yield server
    server.stop()


def model_config(
    path: Path,
    server: LocalServer,
    label: str,
    provider: Literal["openai", "anthropic"] = "openai",
    **options: Any,
) -> Path:
    """A model YAML for the local model on `server`: short replies, bounded calls."""
    config: dict[str, Any] = {
        "provider": provider,
        "name": "smollm2",
        "label": label,
        "base_url": server.base_url if provider == "openai" else server.anthropic_base_url,
        "temperature": 0.6,
        "max_tokens": 128,
        "timeout_s": CALL_TIMEOUT_S,
        "max_retries": 1,
        "backoff_initial_s": 0.1,
        "notes": f"SmolLM2-135M-Instruct Q4_1 on {RUNTIME} ({provider} API)",
    }
    path.write_text(yaml.safe_dump(config | options))
    return path
