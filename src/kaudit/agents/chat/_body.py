"""A chat request body whose message history is encoded once, not once per turn.

Chat APIs are stateless: every turn sends the whole conversation again. Handing the SDK a
dict makes it re-encode the full history (and the tool schemas) on every call, so a run
of n turns encodes O(n²) bytes; a 30-turn agent with a few kilobytes per tool result
spends more CPU there than on the HTTP request itself. Here each message is encoded when
it is appended and the body is the join of those bytes. The encoding is the SDKs' own
(compact separators, UTF-8 without escaping, no NaN), so the bytes sent are a valid JSON
object the server reads exactly as the dict it replaces.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from typing import Any


def encode(value: Any) -> bytes:
    """JSON as the SDKs send it; `ValueError` for NaN or infinity, as theirs."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class MessageBody:
    """`{"messages": [...], **fields}` kept as bytes; `messages` mirrors what was appended.

    `fields` are fixed for the conversation (model, tools, sampling, extra body) and are
    encoded once; a field named `messages` is refused since it would be sent twice.
    """

    def __init__(self, fields: Mapping[str, Any], messages: list[dict[str, Any]]) -> None:
        if "messages" in fields:
            raise ValueError("the fixed fields must not hold 'messages'")
        self.fields = dict(fields)
        self.messages: list[dict[str, Any]] = []
        self._parts: list[bytes] = []
        rest = encode(self.fields)[1:]  # '"model":…}' or just '}'
        self._tail = rest if rest == b"}" else b"," + rest
        for message in messages:
            self.append(message)

    def append(self, message: dict[str, Any]) -> None:
        """Add one message; it must not change afterwards (its bytes are kept)."""
        self._parts.append(encode(message))
        self.messages.append(message)

    def content(self) -> bytes:
        """The whole body as UTF-8 JSON."""
        return b'{"messages":[' + b",".join(self._parts) + b"]" + self._tail

    def as_dict(self) -> dict[str, Any]:
        """The same body as a dict, for SDKs that cannot take raw content."""
        return {"messages": self.messages, **self.fields}


_TAKES_CONTENT: dict[type[Any], bool] = {}


def takes_content(client: Any) -> bool:
    """Whether the SDK client's `post` accepts raw bytes as `content` (recent SDKs do)."""
    kind: type[Any] = type(client)
    known = _TAKES_CONTENT.get(kind)
    if known is None:
        known = _TAKES_CONTENT[kind] = "content" in inspect.signature(client.post).parameters
    return known


async def post(client: Any, path: str, body: MessageBody, headers: dict[str, str]) -> Any:
    """POST `body` through the SDK client (its auth, errors and parsing), the reply as JSON.

    `cast_to=object` returns the decoded JSON instead of building the SDK's response
    models from it, which the conversations do not need (~0.1 ms a reply).
    """
    if takes_content(client):
        return await client.post(
            path, cast_to=object, content=body.content(), options={"headers": headers}
        )
    return await client.post(
        path, cast_to=object, body=body.as_dict(), options={"headers": headers}
    )
