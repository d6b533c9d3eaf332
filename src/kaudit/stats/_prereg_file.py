"""Freezing a pre-registration file and checking it is still frozen: file I/O by design.

The rest of ``kaudit.stats`` is pure. Freezing is not: its whole point is a record on
disk, ``FILE.lock`` beside the prereg file, holding the sha256 of the file's exact bytes,
so that analysis can refuse a file edited after the data were seen. Keeping the reading
and writing here, in one module named for it, lets every command (and any script) share
one freeze/verify rule while the statistics stay free of I/O.
"""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Any

from kaudit._atomic import write_atomic
from kaudit.errors import SpecError

from ._prereg import Prereg, load_prereg, prereg_digest

__all__ = ["freeze_prereg", "load_frozen_prereg", "prereg_lock_path"]

_LOCK_SUFFIX = ".lock"


def prereg_lock_path(path: Path) -> Path:
    """Where the lock of the prereg file at ``path`` lives: ``FILE.lock`` beside it."""
    return path.with_name(path.name + _LOCK_SUFFIX)


def _frozen_digest(lock: Path) -> Any:
    return json.loads(lock.read_text(encoding="utf-8")).get("sha256")


def freeze_prereg(path: Path, force: bool = False) -> dict[str, Any]:
    """Validate the prereg file and write its lock; returns the lock record.

    The record (JSON) holds ``file``, ``sha256`` of the exact bytes, ``frozen_at`` (UTC)
    and the parsed ``criteria``. Refuses (SpecError) to overwrite a lock that records
    different bytes unless ``force``: the lock is the record of what was promised.
    An invalid file raises SpecError and writes nothing.
    """
    from kaudit.spec._yaml import decode_utf8  # here, not at import: `stats` reads no YAML

    data = path.read_bytes()
    prereg = load_prereg(decode_utf8(data, path), str(path))
    digest = prereg_digest(data)
    lock = prereg_lock_path(path)
    if lock.exists() and not force:
        old = _frozen_digest(lock)
        if old != digest:
            raise SpecError(path, "sha256", f"already frozen as {old}; the file has changed since")
    record = {
        "file": path.name,
        "sha256": digest,
        "frozen_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "criteria": prereg.model_dump(mode="json"),
    }
    write_atomic(lock, json.dumps(record, indent=2) + "\n")  # never a half-written lock
    return record


def load_frozen_prereg(path: Path) -> tuple[Prereg, str]:
    """The prereg at ``path`` and its sha256, provided its bytes are the frozen ones.

    Raises SpecError when the file has no lock or its sha256 differs from the lock's,
    before the file is parsed, and when it does not validate.
    """
    data = path.read_bytes()
    lock = prereg_lock_path(path)
    if not lock.exists():
        raise SpecError(path, "sha256", f"not frozen: run `kaudit prereg freeze {path}` first")
    frozen = _frozen_digest(lock)
    digest = prereg_digest(data)
    if frozen != digest:
        raise SpecError(path, "sha256", f"changed since it was frozen ({frozen}); refusing")
    from kaudit.spec._yaml import decode_utf8

    return load_prereg(decode_utf8(data, path), str(path)), digest
