"""The world door on PostgreSQL: the agent's own SQL through kaudit's wire proxy.

Registered for every run whose world is a database on a server: the agent's
`KAUDIT_DATABASE_URL` becomes `postgresql://ROLE:PASSWORD@127.0.0.1:PORT/DB`, the run's
login role (owning nothing; the identity's grants and row-level security when the run
has one) reached through a loopback proxy that injects the run's faults at the agent's
own commits. What the proxy saw goes into the record: `faults` with the statement each
hit, `boundary_attempts` with the refused statement, and `extra["postgres_wire"]`.
psycopg is imported only when such a run opens its door. `hold` is how long a timed-out
commit's answer is held before the connection drops (seconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from urllib.parse import unquote, urlsplit

from kaudit.errors import SubstrateError
from kaudit.postgres._proxy import DEFAULT_HOLD
from kaudit.serve._doors import Door, DoorEvidence, HandedWorld, register_door


class PostgresWireDoor:
    """One run's agent role and proxy, opened and closed off the event loop."""

    def __init__(self, hold: float = DEFAULT_HOLD) -> None:
        self.hold = hold
        self._door: object | None = None

    async def open(self, world: HandedWorld) -> Mapping[str, str]:
        """Create the role, start the proxy; the agent's `KAUDIT_DATABASE_URL`."""
        from kaudit.postgres._wire_door import WireDoor

        database = unquote(urlsplit(world.database_url).path.lstrip("/"))
        if not database:
            raise SubstrateError(f"run {world.episode.run_id}: the handed URL names no database")
        door = WireDoor(world.database_url, database, hold=self.hold)
        opening = _in_thread(lambda: door.open(world.faults, world.seed, world.identity))
        try:
            url = await asyncio.wrap_future(opening)
        except BaseException:  # cancelled: the open goes on in its thread
            # What it makes is undone when it ends (an open that failed undid itself).
            opening.add_done_callback(lambda done: _undo(done, door))
            raise
        self._door = door
        return {"KAUDIT_DATABASE_URL": url}

    async def close(self) -> DoorEvidence:
        """Stop the proxy, drop the role; the faults and refusals the proxy saw."""
        from kaudit.postgres._wire_door import WireDoor

        door, self._door = self._door, None
        if not isinstance(door, WireDoor):
            return DoorEvidence()
        log = await asyncio.to_thread(door.close)
        return DoorEvidence(
            faults=list(log.faults),
            boundary_attempts=list(log.boundary_attempts),
            extra={"postgres_wire": {"connections": log.connections, "batches": log.batches}},
            reached=log.connections > 0,
        )


def _in_thread(call: Callable[[], str]) -> Future[str]:
    """`call()` on a thread of its own; its future, whose callbacks run when it ends.

    Not the loop's executor: a future from there is cancelled with the task awaiting
    it, and then says nothing of when, or whether, the call finished.
    """
    future: Future[str] = Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return  # cancelled before it began: nothing was made
        try:
            future.set_result(call())
        except BaseException as exc:  # handed to the waiting task
            future.set_exception(exc)

    threading.Thread(target=run, name="kaudit-wire-door-open").start()
    return future


def _undo(done: Future[str], door: object) -> None:
    """Close the door an abandoned open made (one that failed has undone itself)."""
    from kaudit.postgres._wire_door import WireDoor

    if done.cancelled() or done.exception() is not None or not isinstance(door, WireDoor):
        return
    with contextlib.suppress(SubstrateError):  # `substrate prune` drops a role left here
        door.close()


class PostgresWireDoors:
    """Chooses the wire door for a world on a PostgreSQL server (None for a file).

    It enforces identities: the URL its door hands out is a login role under the run
    identity's grants and row-level security.
    """

    enforces_identity = True

    def __call__(self, world: HandedWorld) -> Door | None:
        """The run's wire door, or None when its world is not on a PostgreSQL server."""
        scheme = urlsplit(world.database_url).scheme
        if not world.on_server or scheme not in ("postgresql", "postgres"):
            return None
        return PostgresWireDoor()


postgres_wire_door = register_door(PostgresWireDoors())
"""The registered factory of the PostgreSQL wire door."""
