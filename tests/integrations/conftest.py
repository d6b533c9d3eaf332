"""Inspect in its own process, offline: nothing may reach tiktoken's download server.

Inspect counts tokens with tiktoken's `o200k_base`, which tiktoken downloads on first use.
kaudit writes that table from the `quicktok-v1` wheel into tiktoken's cache before an
eval; these tests start every Inspect process with an empty cache of its own and an
HTTPS proxy that refuses connections, so they pass only if kaudit did, with or without
network on the machine running them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DEAD_PROXY = "http://127.0.0.1:9"
"""The discard port: nothing listens, so any HTTPS download fails at once."""


@pytest.fixture
def inspect_env(tmp_path: Path) -> dict[str, str]:
    """The environment of an offline Inspect process with an empty tiktoken cache."""
    return os.environ | {
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken"),
        "HTTPS_PROXY": DEAD_PROXY,
        "https_proxy": DEAD_PROXY,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
