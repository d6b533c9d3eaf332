"""The real local model servers the `real_model` tests share (SmolLM2 on llama.cpp).

Each server is started once per session on a free loopback port and SIGKILLed after a
grace period at the end. A missing install skips these tests on a laptop but fails them
under `CI=true`: CI must prove kaudit against a real model, never silently skip it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kaudit.agents.chat.local import LocalServer, ServerKind, ServerOptions
from kaudit.errors import KauditError

CALL_TIMEOUT_S = 90.0
"""Every API call's bound: a call that hits it ends the run as the model's timeout."""


def start(kind: ServerKind, log: Path, **options: Any) -> LocalServer:
    """A started server of `kind`, or a skip (a failure under CI) naming what is missing."""
    server = LocalServer(ServerOptions(kind=kind, **options), log_path=log)
    try:
        server.start()
    except KauditError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"real model server {kind}: {exc}")
        pytest.skip(f"real model server {kind}: {exc}")
    return server


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """llama.cpp's `llama-server` with a tool-calling ChatML template (bounded replies)."""
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    server = start("llama-server", log, max_reply_tokens=160)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def llama_cpp_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """llama-cpp-python's server with `chatml-function-calling`.

    Its tool-argument generation has no token cap, so its context is kept small: that
    bounds the longest reply it can produce.
    """
    log = tmp_path_factory.mktemp("llama-cpp-python") / "server.log"
    server = start("llama-cpp-python", log, context=3072)
    yield server
    server.stop()


def model_config(path: Path, server: LocalServer, label: str, **options: Any) -> Path:
    """A model YAML for the local model on `server`: short replies, bounded calls."""
    config: dict[str, Any] = {
        "provider": "openai",
        "name": "smollm2",
        "label": label,
        "base_url": server.base_url,
        "temperature": 0.6,
        "max_tokens": 128,
        "timeout_s": CALL_TIMEOUT_S,
        "max_retries": 1,
        "backoff_initial_s": 0.1,
        "notes": f"SmolLM2-135M-Instruct Q4_1 on {server.options.kind}",
    }
    path.write_text(yaml.safe_dump(config | options))
    return path
