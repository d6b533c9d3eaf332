"""One client connection through the wire proxy: forward, watch the commits, break some.

Client messages are grouped into batches, each ending where the server answers with
ReadyForQuery: a simple Query, or the extended protocol's messages up to Sync (held
back until the Sync, so nothing of a batch the proxy drops reaches the server). Before
forwarding a batch that may end a writing transaction (a COMMIT or END while the server
says a block with writes is open; a writing statement outside a block, which commits
on its own) the proxy waits for every earlier answer, so it knows the transaction
state, and draws the fault:

- `fail_before_commit`: the batch is never forwarded; both connections are closed, so
  the server rolls the transaction back;
- `ack_lost_after_commit`: the batch is forwarded and its answer held until its
  ReadyForQuery; then both connections are closed and the client never sees the
  CommandComplete of a commit the server has made;
- `timeout_after_commit`: as a lost acknowledgement, but the answer is held for the
  proxy's `hold` seconds first (or until the client gives up and closes).

Each injection is recorded with the statement it hit and the transaction's writes;
each refusal by the boundary (SQLSTATE 42501) with its table, key and reason.
A batch after a Flush (a client that pipelines without Sync) is forwarded early
and never faulted; so is a COPY, which needs the client's data mid-batch.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kaudit.postgres._statements import (
    WRITE_TAGS,
    is_begin,
    is_commit,
    is_rollback,
    may_write,
    split_statements,
)
from kaudit.postgres._wire import (
    Message,
    bind_fields,
    error_fields,
    first_cstring,
    parse_fields,
    read_message,
    ready_status,
)
from kaudit.postgres._wire_faults import WIRE_TOOL, WireFaults
from kaudit.spec._faults import FaultKind

_EXTENDED = {b"P", b"B", b"E", b"D", b"C"}
"""Extended-protocol messages held back until the batch's Sync."""
_COMPLETIONS = {b"C", b"I", b"s"}
"""CommandComplete, EmptyQueryResponse, PortalSuspended: one executed statement each."""
_MAX_TEXT = 2000
"""Statement text kept in the record, in characters, per statement."""

Denier = Callable[[dict[str, str], str], tuple[str, str | None, str] | None]
"""(ErrorResponse fields, statement) -> (table, key, reason) of a boundary refusal."""


@dataclass
class WireLog:
    """What the proxy saw across its connections: faults, refusals, counts."""

    faults: list[dict[str, Any]] = field(default_factory=list)
    boundary_attempts: list[dict[str, Any]] = field(default_factory=list)
    connections: int = 0
    batches: int = 0

    def next_batch(self) -> int:
        """The run-wide 0-based index of the next batch forwarded (the record's `call`)."""
        self.batches += 1
        return self.batches - 1


@dataclass(frozen=True)
class _Hold:
    """A forwarded batch whose answer is withheld, and the fault that does it."""

    number: int
    call: int
    kind: FaultKind
    statement: str
    transaction: tuple[str, ...]


class Dropped(Exception):
    """Ends a session on purpose: an injected fault closed both connections."""


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[:_MAX_TEXT] + "…"


class WireSession:
    """Pumps one client connection to its server connection and back."""

    def __init__(
        self,
        number: int,
        client: tuple[asyncio.StreamReader, asyncio.StreamWriter],
        server: tuple[asyncio.StreamReader, asyncio.StreamWriter],
        *,
        faults: WireFaults,
        log: WireLog,
        denier: Denier | None,
        hold: float,
    ) -> None:
        self.number = number
        self._client_reader, self._client = client
        self._server_reader, self._server = server
        self._faults, self._log, self._denier, self._hold_for = faults, log, denier, hold
        self._sent = 1  # the startup: the server's first ReadyForQuery answers it
        self._answered = 0
        self._settled = asyncio.Event()
        self._client_gone = asyncio.Event()
        self._status = "I"
        self._written = False
        self._pending: list[str] = []
        self._queries: dict[int, list[str]] = {}
        self._calls: dict[int, int] = {}
        self._hold: _Hold | None = None

    async def run(self) -> None:
        """Forward both ways until either side closes or a fault drops the connection."""
        pumps = [
            asyncio.create_task(self._from_client()),
            asyncio.create_task(self._from_server()),
        ]
        try:
            done, _ = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                error = task.exception()
                if error is not None and not isinstance(error, _ENDINGS):
                    raise error
        finally:
            for task in pumps:
                task.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
            self._close()

    def _close(self) -> None:
        for writer in (self._client, self._server):
            writer.transport.abort()

    async def _from_client(self) -> None:
        prepared: dict[str, str] = {}
        portals: dict[str, str] = {}
        held: list[Message] = []
        queries: list[str] = []
        early = False
        try:
            while True:
                message = await read_message(self._client_reader)
                kind = message.kind
                if kind == b"P":
                    name, query = parse_fields(message.payload)
                    prepared[name] = query
                elif kind == b"B":
                    portal, statement = bind_fields(message.payload)
                    portals[portal] = prepared.get(statement, "")
                elif kind == b"E":
                    queries.append(portals.get(first_cstring(message.payload), ""))
                elif kind == b"Q":
                    queries.extend(split_statements(first_cstring(message.payload)))
                held.append(message)
                if kind in (b"S", b"Q"):
                    await self._batch(held, queries, early)
                    held, queries, early = [], [], False
                elif kind not in _EXTENDED:
                    # Flush, COPY data, a function call: the server acts now, on the
                    # batch's extended messages too, so that batch can no longer be broken.
                    early = early or any(m.kind in _EXTENDED for m in held)
                    await self._forward(held)
                    held = []
                if kind == b"X":
                    return
        finally:
            self._client_gone.set()

    async def _forward(self, messages: list[Message]) -> None:
        self._server.write(b"".join(m.encode() for m in messages))
        await self._server.drain()

    async def _batch(self, messages: list[Message], queries: list[str], early: bool) -> None:
        """Forward one batch, or drop the connection before it, as the draw says."""
        call = self._log.next_batch()
        kind: FaultKind | None = None
        if not early and any(is_commit(q) or may_write(q) for q in queries):
            await self._settled.wait()  # the transaction state after every earlier batch
            if self._commits(queries):
                kind = self._faults.draw()
        writes = [q for q in queries if may_write(q)]
        statement = next((q for q in queries if is_commit(q)), "; ".join(writes))
        transaction = (*self._pending, *writes)
        if kind == "fail_before_commit":
            self._record(call, kind, statement, transaction, committed=False)
            raise Dropped
        self._sent += 1
        self._settled.clear()
        self._queries[self._sent] = queries
        self._calls[self._sent] = call
        self._pending.extend(writes)
        if kind is not None:
            self._hold = _Hold(self._sent, call, kind, statement, transaction)
        await self._forward(messages)

    def _commits(self, queries: list[str]) -> bool:
        """Whether the batch, sent in the current state, commits rows it or its block wrote."""
        if any(is_rollback(q) for q in queries):
            return False
        if self._status == "T":
            return any(is_commit(q) for q in queries) and (
                self._written or any(may_write(q) for q in queries)
            )
        if self._status == "I" and any(may_write(q) for q in queries):
            return not any(is_begin(q) for q in queries) or any(is_commit(q) for q in queries)
        return False  # 'E': a failed block's COMMIT only rolls back

    async def _from_server(self) -> None:
        withheld: list[Message] = []
        done = 0
        committed = False
        while True:
            message = await read_message(self._server_reader)
            kind, number = message.kind, self._answered + 1
            if kind in _COMPLETIONS:
                done += 1
                committed |= self._completed(message)
            elif kind == b"E":
                self._refused(message, number, done)
                self._written = False
            elif kind == b"Z":
                committed |= self._ready(ready_status(message.payload))
            hold = self._hold
            if hold is not None and hold.number == number:
                withheld.append(message)
                if kind == b"Z":
                    await self._break(hold, committed)
            else:
                self._client.write(message.encode())
                if kind == b"Z":
                    await self._client.drain()
            if kind == b"Z":
                done, committed = 0, False

    def _completed(self, message: Message) -> bool:
        """Note a statement's tag; True when it commits rows written in the block."""
        tag = first_cstring(message.payload).split()
        if not tag:
            return False
        if tag[0] in WRITE_TAGS and tag[-1].isdigit() and int(tag[-1]) > 0:
            self._written = True
        if tag[0] == "COMMIT":
            committed, self._written = self._written, False
            return committed
        if tag[0] == "ROLLBACK":
            self._written = False
        return False

    def _ready(self, status: str) -> bool:
        """Note a batch's end; True when an implicit transaction committed its writes."""
        committed = status == "I" and self._written
        self._answered += 1
        self._status = status
        self._queries.pop(self._answered, None)
        if status == "I":
            self._written = False
            if self._answered == self._sent:
                self._pending.clear()
        if self._answered == self._sent:
            self._settled.set()
        return committed

    async def _break(self, hold: _Hold, committed: bool) -> None:
        """The withheld answer is complete: wait out a timeout, then drop both connections."""
        self._record(hold.call, hold.kind, hold.statement, hold.transaction, committed=committed)
        if hold.kind == "timeout_after_commit":
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._client_gone.wait(), self._hold_for)
        raise Dropped

    def _record(
        self,
        call: int,
        kind: FaultKind,
        statement: str,
        transaction: tuple[str, ...],
        *,
        committed: bool,
    ) -> None:
        self._log.faults.append(
            {
                "call": call,
                "call_id": f"pg{self.number}:{call}",
                "tool": WIRE_TOOL,
                "kind": kind,
                "committed": committed,
                "applied": int(committed),
                "statement": "; ".join(_clip(s) for s in dict.fromkeys((*transaction, statement))),
            }
        )

    def _refused(self, message: Message, number: int, done: int) -> None:
        """Record a refusal of the boundary in the batch's `done`-th statement."""
        if self._denier is None:
            return
        fields = error_fields(message.payload)
        queries = self._queries.get(number, [])
        statement = queries[done] if done < len(queries) else "; ".join(queries)
        found = self._denier(fields, statement)
        if found is None:
            return
        table, key, reason = found
        call = self._calls.get(number, self._log.batches)
        self._log.boundary_attempts.append(
            {
                "call": call,
                "call_id": f"pg{self.number}:{call}",
                "tool": WIRE_TOOL,
                "table": table,
                "key": key,
                "reason": reason,
                "statement": _clip(statement),
            }
        )


_ENDINGS = (Dropped, asyncio.IncompleteReadError, ConnectionError)
"""How a session ends normally: a fault, or either side closing its connection."""
