"""A per-run loopback PostgreSQL proxy: the agent's driver in front, the run's database behind.

It listens on 127.0.0.1 on a free port and, for each connection, answers SSL and GSS
encryption requests with 'N' (the loopback link stays plain; the server link is plain
too, so a server that only accepts TLS cannot be proxied), passes cancel requests
through, and rewrites the startup packet's user and database to the run's role and
database, so whatever the agent asks for it reaches only its own run. Authentication is
passed through: the server's requests go to the client and its answers back.

It runs its own event loop on its own thread (`start`/`stop` are plain calls), so it
keeps serving whatever the caller's loop is doing while the agent runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass

from kaudit.errors import SubstrateError
from kaudit.postgres._wire import (
    CANCEL_REQUEST,
    GSSENC_REQUEST,
    PROTOCOL_3,
    SSL_REQUEST,
    Startup,
    error_message,
    read_startup,
    startup_packet,
)
from kaudit.postgres._wire_faults import WireFaults
from kaudit.postgres._wire_session import Denier, WireLog, WireSession

DEFAULT_HOLD = 30.0
"""Seconds a timed-out commit's answer is held before the connection drops, as the tool
layer's timeout says 30 s."""
_START_TIMEOUT = 10.0
_HANDSHAKE_TIMEOUT = 30.0


@dataclass(frozen=True)
class Upstream:
    """Where the real server is: a TCP host and port, or a Unix socket directory."""

    host: str
    port: int

    async def open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A new connection to the server."""
        if self.host.startswith("/"):
            return await asyncio.open_unix_connection(f"{self.host}/.s.PGSQL.{self.port}")
        return await asyncio.open_connection(self.host, self.port)


class WireProxy:
    """Serves one run: every connection goes to `database` as `user`, faults as drawn."""

    def __init__(
        self,
        upstream: Upstream,
        *,
        database: str,
        user: str,
        faults: WireFaults,
        denier: Denier | None = None,
        hold: float = DEFAULT_HOLD,
    ) -> None:
        self.upstream, self.database, self.user = upstream, database, user
        self.log = WireLog()
        self._faults, self._denier, self._hold = faults, denier, hold
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self._stopping = threading.Event()
        self._sessions: set[asyncio.StreamWriter] = set()
        self.port = 0

    def start(self) -> int:
        """Listen on 127.0.0.1; returns the port. Raises `SubstrateError` if it cannot.

        A start that fails or is interrupted stops the listener it may still bring up.
        """
        ready: Future[int] = Future()
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._serve(ready)), name="kaudit-pg-proxy", daemon=True
        )
        self._thread.start()
        try:
            self.port = ready.result(timeout=_START_TIMEOUT)
        except BaseException as exc:
            self.stop()
            if isinstance(exc, OSError | TimeoutError):
                raise SubstrateError(f"the PostgreSQL proxy cannot listen: {exc}") from None
            raise
        return self.port

    def stop(self) -> WireLog:
        """Close the listener and every open connection; what was seen.

        Also before the listener is up: the serving thread then closes it at once.
        """
        self._stopping.set()  # read by the serving thread after it has made its loop
        if self._loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already ended
                self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout=_START_TIMEOUT)
        return self.log

    async def _serve(self, ready: Future[int]) -> None:
        # `_stop` and `_loop` are set before `_stopping` is read: a `stop` that comes
        # later signals `_stop`; one that came earlier is seen here or after listening.
        self._stop = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        if self._stopping.is_set():
            ready.set_exception(OSError("the proxy was stopped before it listened"))
            return
        try:
            server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        except OSError as exc:
            ready.set_exception(exc)
            return
        async with server:
            ready.set_result(server.sockets[0].getsockname()[1])
            await self._stop.wait()
            server.close()
            # Closing the clients' sockets ends each session's pumps; cancelling the
            # stream callbacks' tasks instead would log their cancellation as an error.
            for writer in list(self._sessions):
                writer.transport.abort()
            deadline = self._loop.time() + _START_TIMEOUT
            while self._sessions and self._loop.time() < deadline:
                await asyncio.sleep(0.01)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._sessions.add(writer)
        try:
            await self._session(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError, SubstrateError):
            pass  # a client that left or never spoke PostgreSQL: nothing to record
        finally:
            self._sessions.discard(writer)
            writer.transport.abort()

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        startup = await asyncio.wait_for(_negotiate(reader, writer), _HANDSHAKE_TIMEOUT)
        if startup.code == CANCEL_REQUEST:
            await self._cancel(startup)
            return
        if startup.code != PROTOCOL_3:
            writer.write(error_message("0A000", "only protocol 3.0 is proxied").encode())
            await writer.drain()
            return
        server = await self.upstream.open()
        parameters = {k: v for k, v in startup.parameters.items() if k != "replication"}
        parameters |= {"user": self.user, "database": self.database}
        server[1].write(startup_packet(parameters).encode())
        self.log.connections += 1
        session = WireSession(
            self.log.connections,
            (reader, writer),
            server,
            faults=self._faults,
            log=self.log,
            denier=self._denier,
            hold=self._hold,
        )
        await session.run()

    async def _cancel(self, request: Startup) -> None:
        """Pass a cancel request to the server (its backend key came through unchanged)."""
        _, writer = await self.upstream.open()
        writer.write(request.encode())
        await writer.drain()
        writer.close()
        await writer.wait_closed()


async def _negotiate(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Startup:
    """The client's startup packet, after refusing any SSL or GSS encryption request."""
    while True:
        packet = await read_startup(reader)
        if packet.code not in (SSL_REQUEST, GSSENC_REQUEST):
            return packet
        writer.write(b"N")
        await writer.drain()


def upstream_of(conninfo: Mapping[str, object]) -> Upstream:
    """Where a libpq conninfo's server is (its first host; 127.0.0.1:5432 by default)."""
    host = str(conninfo.get("host") or conninfo.get("hostaddr") or "127.0.0.1").split(",")[0]
    port = str(conninfo.get("port") or "5432").split(",")[0]
    return Upstream(host, int(port))
