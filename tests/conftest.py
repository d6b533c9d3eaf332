"""Shared fixtures: a small registered world and its suite, and an isolated template cache."""

from __future__ import annotations

from pathlib import Path

import pytest

import tests.mini_world  # noqa: F401  (registers the 'mini' world)
from kaudit.suites import Suite, load_yaml_suite
from tests.realmodel import local_server, toolless_server  # noqa: F401  (session fixtures)

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True, scope="session")
def _template_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    import os

    os.environ.setdefault("KAUDIT_CACHE", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def mini_suite() -> Suite:
    return load_yaml_suite(FIXTURES / "mini_suite", "mini")
