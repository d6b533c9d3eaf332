"""Shared fixtures: a small registered world and its suite, and an isolated template cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

import tests.mini_world  # noqa: F401  (registers the 'mini' world)
from kaudit.suites import Suite, load_yaml_suite
from tests.realmodel import local_server, toolless_server  # noqa: F401  (session fixtures)

# CI's property tests draw the same examples on every run (derandomized, no example
# database): a failure there is replayed by running the same command, never lost to a
# random draw no one can repeat. Locally the search stays random and keeps what it finds.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):  # any CI value, as tests/pg.py reads it
    settings.load_profile("ci")

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True, scope="session")
def _template_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    import os

    os.environ.setdefault("KAUDIT_CACHE", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def mini_suite() -> Suite:
    return load_yaml_suite(FIXTURES / "mini_suite", "mini")
