"""The served-run spool: a finished run kept on disk until its ledger takes it.

A served run changed state and its client already has the verdict, so it must reach
the ledger even when another process (a long `kaudit run`) holds the ledger's writer
lock when the run ends. Each finished served run is first written, whole and fsynced,
to `LEDGER.spool/`; it is appended from there under the lock, and its file removed
once the append has committed. A run still spooled when the wait runs out is appended
by the next `kaudit mcp serve` of that ledger. Each spooled record names its spool
entry (`extra["served"]["spool"]`), so an entry whose append committed just before a
kill is recognized and not appended twice.

The spool is not evidence: no reader reads it, and what it adds to the ledger is new
chained records like any other writer's (after an anchor, unanchored).
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kaudit._atomic import write_atomic
from kaudit.errors import LedgerError
from kaudit.ledger import RunRecord

__all__ = ["SPOOL_VERSION", "RunSpooled", "SpooledRun", "spool_dir", "spool_run", "spooled_runs"]

SPOOL_VERSION = 1


class RunSpooled(LedgerError):
    """The run is safe in the spool but not yet in the ledger (its lock stayed taken)."""

    def __init__(self, message: str, path: Path) -> None:
        self.path = path
        super().__init__(message)


@dataclass(frozen=True)
class SpooledRun:
    """One spooled run: its record, its final image and the campaign facts it pins."""

    path: Path
    record: RunRecord
    final_image: bytes | None
    config: dict[str, Any]

    @property
    def spool_id(self) -> str:
        """The entry's name, kept in the appended record (`extra["served"]["spool"]`)."""
        return self.path.stem

    def appended_as(self, run_index: int) -> RunRecord:
        """The record the ledger appends: the run's own, at its cell's next free index.

        Only the ledger's writer knows the index, and the spool id names the entry, so
        this is where a served run's ledger record is built, validated like any other.
        """
        fields = self.record.model_dump(mode="json")
        served = dict(fields["extra"].get("served") or {}) | {"spool": self.spool_id}
        extra = fields["extra"] | {"served": served}
        return RunRecord.model_validate(fields | {"run_index": run_index, "extra": extra})


def spool_dir(ledger_path: Path) -> Path:
    """`LEDGER.spool`, beside the ledger file."""
    return ledger_path.with_name(ledger_path.name + ".spool")


def spool_run(
    ledger_path: Path, record: RunRecord, final_image: bytes | None, config: dict[str, Any]
) -> SpooledRun:
    """Write the run to the spool (atomic and fsynced) and return the entry.

    Entries are named by time, so the spool drains in the order runs finished.
    """
    folder = spool_dir(ledger_path)
    try:
        folder.mkdir(exist_ok=True)
    except OSError as exc:
        raise LedgerError(f"{folder}: cannot create the spool ({exc.strerror or exc})") from None
    spool_id = f"{time.time_ns():020d}-{uuid.uuid4().hex}"
    data = {
        "version": SPOOL_VERSION,
        "record": record.model_dump(mode="json"),
        "final_image": None if final_image is None else base64.b64encode(final_image).decode(),
        "config": config,
    }
    path = folder / f"{spool_id}.json"
    try:
        write_atomic(path, json.dumps(data, sort_keys=True))
    except OSError as exc:
        raise LedgerError(f"{path}: cannot spool the run ({exc.strerror or exc})") from None
    return SpooledRun(path, record, final_image, config)


def spooled_runs(ledger_path: Path) -> list[SpooledRun]:
    """Every spooled run of the ledger, oldest first; a damaged entry is a LedgerError."""
    folder = spool_dir(ledger_path)
    if not folder.is_dir():
        return []
    return [_read(path) for path in sorted(folder.glob("*.json"))]


def _read(path: Path) -> SpooledRun:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("version") != SPOOL_VERSION:
            raise ValueError("not a spooled run of this kaudit version")
        image = data.get("final_image")
        return SpooledRun(
            path,
            RunRecord.model_validate(data["record"]),
            None if image is None else base64.b64decode(image),
            dict(data["config"]),
        )
    except (OSError, ValueError, KeyError, TypeError, ValidationError) as exc:
        raise LedgerError(f"{path}: unreadable spooled run ({exc}); move it aside") from None
