"""Writing an output file all at once: a temporary file beside it, fsynced, then renamed.

A report, an export, a key or a prereg lock is either the previous file or the complete
new one, never a 0-byte or half-written file: a SIGKILL or a full disk in the middle of
a write leaves the previous file as it was. The temporary file lives in the target's
folder (a rename is atomic only within one file system) and is named after the target
and the writing process, `.NAME.PID.kaudit-tmp`; one left behind by a killed writer is
removed by the next write of the same target.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kaudit.errors import KauditError

__all__ = ["TEMP_SUFFIX", "replacing", "write_atomic"]

TEMP_SUFFIX = ".kaudit-tmp"


def _temp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}{TEMP_SUFFIX}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def remove_stale_temps(path: Path) -> None:
    """Remove the temporaries of `path` that writers which are no longer running left.

    A live process's temporary is kept: it may be writing the same target right now.
    """
    prefix = f".{path.name}."
    with contextlib.suppress(OSError):
        for entry in path.parent.iterdir():
            name = entry.name
            if not (name.startswith(prefix) and name.endswith(TEMP_SUFFIX)):
                continue
            pid = name[len(prefix) : -len(TEMP_SUFFIX)]
            if pid == str(os.getpid()) or (pid.isdigit() and not _alive(int(pid))):
                entry.unlink(missing_ok=True)


def _fsync_path(path: Path, flags: int = os.O_RDONLY) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def replacing(path: Path, *, exclusive: bool = False) -> Iterator[Path]:
    """A temporary path beside `path`; when the block succeeds it becomes `path`.

    The block writes the temporary file (any way it likes); then it is fsynced and
    renamed over `path`, and the folder fsynced, so the new name survives a power cut.
    With `exclusive`, an existing `path` is never replaced (a KauditError names it),
    checked atomically by the link that puts the file in place. On any failure
    the temporary is removed and `path` is left as it was.
    """
    remove_stale_temps(path)
    tmp = _temp_path(path)
    try:
        yield tmp
        _fsync_path(tmp)
        if exclusive:
            try:
                os.link(tmp, path)  # fails if `path` exists: never overwrites
            except FileExistsError:
                raise KauditError(f"{path}: already exists; it is never overwritten") from None
        else:
            os.replace(tmp, path)
        with contextlib.suppress(OSError):  # some file systems cannot fsync a folder
            _fsync_path(path.parent)
    finally:
        tmp.unlink(missing_ok=True)


def write_atomic(
    path: Path, data: bytes | str, *, mode: int = 0o644, exclusive: bool = False
) -> None:
    """Write `data` (text as UTF-8) to `path` in one piece, as `replacing` does.

    `mode` applies from the file's creation on (a private key is never readable by
    others, even while it is being written).
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with replacing(path, exclusive=exclusive) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
