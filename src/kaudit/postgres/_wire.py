"""PostgreSQL's v3 wire protocol: framing and the few message fields the proxy reads.

Only what a forwarding proxy needs: the untyped startup packets (startup, SSL and GSS
encryption requests, cancel requests), typed messages as (type, payload), and the fields
of Parse, Bind, Execute, Query, CommandComplete, ReadyForQuery and ErrorResponse. Every
other message is forwarded as bytes, unread.
"""

from __future__ import annotations

import asyncio
import struct
from dataclasses import dataclass

from kaudit.errors import SubstrateError

PROTOCOL_3 = 196608
SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104
CANCEL_REQUEST = 80877102
MAX_STARTUP = 10_000
"""libpq's own limit on a startup packet; a larger one is not a PostgreSQL client."""


@dataclass(frozen=True)
class Message:
    """One typed message: its type byte and payload (without the length word)."""

    kind: bytes
    payload: bytes

    def encode(self) -> bytes:
        """The message as it travels on the wire."""
        return self.kind + struct.pack("!I", len(self.payload) + 4) + self.payload


@dataclass(frozen=True)
class Startup:
    """The first packet of a connection: a protocol code and, for a startup, parameters."""

    code: int
    body: bytes

    @property
    def parameters(self) -> dict[str, str]:
        """A startup packet's key/value pairs (user, database, options, ...)."""
        parts = self.body.split(b"\0")
        pairs = [p.decode() for p in parts]
        return {pairs[i]: pairs[i + 1] for i in range(0, len(pairs) - 1, 2) if pairs[i]}

    def encode(self) -> bytes:
        """The packet as it travels on the wire."""
        return struct.pack("!II", len(self.body) + 8, self.code) + self.body


def startup_packet(parameters: dict[str, str]) -> Startup:
    """A protocol 3.0 startup packet with `parameters`, in their order."""
    body = b"".join(k.encode() + b"\0" + v.encode() + b"\0" for k, v in parameters.items())
    return Startup(PROTOCOL_3, body + b"\0")


async def read_startup(reader: asyncio.StreamReader) -> Startup:
    """The next untyped packet (startup, SSL/GSS request, cancel request).

    Raises:
        SubstrateError: the length is not one a PostgreSQL client sends.
    """
    head = await reader.readexactly(8)
    length, code = struct.unpack("!II", head)
    if not 8 <= length <= MAX_STARTUP:
        raise SubstrateError(f"not a PostgreSQL startup packet (length {length})")
    return Startup(code, await reader.readexactly(length - 8))


async def read_message(reader: asyncio.StreamReader) -> Message:
    """The next typed message; `asyncio.IncompleteReadError` when the peer has gone."""
    head = await reader.readexactly(5)
    (length,) = struct.unpack("!I", head[1:])
    if length < 4:
        raise SubstrateError(f"malformed PostgreSQL message {head[:1]!r} (length {length})")
    return Message(head[:1], await reader.readexactly(length - 4))


def _cstrings(payload: bytes, count: int) -> tuple[list[str], bytes]:
    """The first `count` NUL-terminated strings of `payload` and what follows them."""
    out: list[str] = []
    rest = payload
    for _ in range(count):
        text, _, rest = rest.partition(b"\0")
        out.append(text.decode(errors="replace"))
    return out, rest


def parse_fields(payload: bytes) -> tuple[str, str]:
    """A Parse message's (statement name, query text)."""
    (name, query), _ = _cstrings(payload, 2)
    return name, query


def bind_fields(payload: bytes) -> tuple[str, str]:
    """A Bind message's (portal name, statement name)."""
    (portal, statement), _ = _cstrings(payload, 2)
    return portal, statement


def first_cstring(payload: bytes) -> str:
    """The leading string of a Query, Execute or CommandComplete message."""
    (text,), _ = _cstrings(payload, 1)
    return text


def ready_status(payload: bytes) -> str:
    """ReadyForQuery's transaction status: 'I' idle, 'T' in a block, 'E' in a failed one."""
    return payload[:1].decode()


def error_fields(payload: bytes) -> dict[str, str]:
    """An ErrorResponse's fields by code letter: 'C' SQLSTATE, 'M' message, 'D' detail, ..."""
    fields: dict[str, str] = {}
    for part in payload.split(b"\0"):
        if part:
            fields[part[:1].decode()] = part[1:].decode(errors="replace")
    return fields


def error_message(code: str, message: str) -> Message:
    """An ErrorResponse the proxy itself sends (severity FATAL)."""
    body = b"SFATAL\0VFATAL\0C" + code.encode() + b"\0M" + message.encode() + b"\0\0"
    return Message(b"E", body)
