"""The wire door's open undoes itself: a failure once the role exists leaves nothing.

Each test injects a failure at one step of `WireDoor.open` after the run's login role
was created, then checks the server's `pg_roles` and the proxy's port.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import psycopg
import pytest

import tests.mini_world  # noqa: F401  (registers the 'mini' world)
from kaudit.postgres._agent_role import agent_role_name
from kaudit.postgres._proxy import WireProxy
from kaudit.postgres._wire_door import WireDoor
from kaudit.substrate import Sandbox
from kaudit.worlds._world import get_world

pytestmark = pytest.mark.postgres


class Injected(Exception):
    """The failure a test injects."""


@pytest.fixture
def box(pg_url: str, request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    sandbox = get_world("mini").substrate(pg_url).seed(f"door-{request.node.name}")
    yield sandbox
    sandbox.close()


def door_of(box: Sandbox) -> WireDoor:
    return WireDoor(box.server, box.database, box.schema)  # type: ignore[attr-defined]


def role_exists(pg_url: str, database: str) -> bool:
    with psycopg.connect(pg_url) as conn:
        found = conn.execute(
            "SELECT 1 FROM pg_roles WHERE rolname = %s", (agent_role_name(database),)
        )
        return found.fetchone() is not None


def accepts(port: int) -> bool:
    """Whether something listens on 127.0.0.1:`port`."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        return False
    return True


def test_a_proxy_that_cannot_be_made_leaves_no_role(
    box: Sandbox, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bug caught: a failure between the role and the proxy's start leaves the login role."""

    def broken(*args: object, **kwargs: object) -> WireProxy:
        assert role_exists(pg_url, box.database)  # type: ignore[attr-defined]
        raise Injected

    monkeypatch.setattr("kaudit.postgres._wire_door.WireProxy", broken)
    with pytest.raises(Injected):
        door_of(box).open([], seed=1, identity=None)
    assert not role_exists(pg_url, box.database)  # type: ignore[attr-defined]


@pytest.mark.parametrize("failure", [Injected, KeyboardInterrupt])
def test_a_failure_once_the_proxy_listens_closes_it_and_drops_the_role(
    box: Sandbox, pg_url: str, monkeypatch: pytest.MonkeyPatch, failure: type[BaseException]
) -> None:
    """Bug caught: the role is dropped but the listener stays up, serving no run."""
    ports: list[int] = []
    start = WireProxy.start

    def listens_then_fails(self: WireProxy) -> int:
        ports.append(start(self))
        raise failure

    monkeypatch.setattr(WireProxy, "start", listens_then_fails)
    door = door_of(box)
    with pytest.raises(failure):
        door.open([], seed=1, identity=None)
    assert not role_exists(pg_url, box.database)  # type: ignore[attr-defined]
    assert not accepts(ports[0])
    assert door.close().connections == 0  # nothing left to close, and closing again is safe
