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
from collections.abc import Mapping
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
        url = await asyncio.to_thread(door.open, world.faults, world.seed, world.identity)
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
