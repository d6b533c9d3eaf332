"""The enterprise world, built once per session; each test seeds its own sandbox."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kaudit.substrate import SqliteSubstrate
from kaudit.substrate._sqlite import SqliteSandbox
from kaudit.worlds import PythonWorld
from kaudit.worlds._world import get_world


@pytest.fixture(scope="session")
def world() -> PythonWorld:
    return get_world("enterprise")


@pytest.fixture(scope="session")
def substrate(world: PythonWorld) -> SqliteSubstrate:
    return world.substrate()


@pytest.fixture
def sandbox(substrate: SqliteSubstrate) -> Iterator[SqliteSandbox]:
    box = substrate.seed("test")
    yield box
    box.close()
