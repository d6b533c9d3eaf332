"""The served-run spool: a finished run kept on disk until its ledger takes it.

A served run changed state and its client already has the verdict, so it must reach
the ledger even when another process (a long `kaudit run`) holds the ledger's writer
lock when the run ends. Each finished served run is first written, whole and fsynced,
to `LEDGER.spool/`; it is appended from there under the lock, and its file removed
once the append has committed. A run still spooled when the wait runs out is appended
by whichever writer takes the ledger next: `kaudit mcp serve`, `kaudit run` (when it
starts and before it lets go of the lock) or `kaudit ledger drain`. Each spooled record
names its spool entry (`extra["served"]["spool"]`), so an entry whose append committed
just before a kill is recognized and not appended twice.

The spool is not an inbox: write access to its directory must not add runs. A served
run is appended only under a claim the ledger issued when the run started (`open_served`
asks `Ledger.issue_claim` under the writer lock): the entry names its claim, the claim
must admit the entry's campaign and task, and a claim is used by one chained record
only (the record carries it in `extra["served"]["claim"]`). An entry without a valid
claim, a copy of an entry whose claim is used, or any other file in the directory is
reported (`Drained.kept`) and left where it is.

The spool lives beside the ledger rather than in the serve package because every
writer drains it. It is not evidence: no reader counts it (readers only say how many
runs wait there), and what it adds to the ledger is new chained records like any other
writer's (after an anchor, unanchored).
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

from kaudit._atomic import TEMP_SUFFIX, write_atomic
from kaudit._run_key import RunKey
from kaudit.errors import LedgerError
from kaudit.ledger._import import IMPORTED
from kaudit.ledger._record import RunRecord
from kaudit.ledger._store import Ledger
from kaudit.ledger._verify import walk_chain

__all__ = [
    "SPOOL_VERSION",
    "Drained",
    "RunSpooled",
    "SpooledRun",
    "drain_ledger",
    "drain_spool",
    "open_for_append",
    "pending_spool",
    "spool_dir",
    "spool_run",
    "spooled_runs",
]

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
    claim: str | None = None
    """The ledger's claim the run was served under (None: an entry without one)."""

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
        if self.claim is not None:
            served["claim"] = self.claim
        extra = fields["extra"] | {"served": served}
        return RunRecord.model_validate(fields | {"run_index": run_index, "extra": extra})


def spool_dir(ledger_path: Path) -> Path:
    """`LEDGER.spool`, beside the ledger file."""
    return ledger_path.with_name(ledger_path.name + ".spool")


def spool_run(
    ledger_path: Path,
    record: RunRecord,
    final_image: bytes | None,
    config: dict[str, Any],
    claim: str | None = None,
) -> SpooledRun:
    """Write the run, served under `claim`, to the spool (atomic, fsynced); return the entry.

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
        "claim": claim,
    }
    path = folder / f"{spool_id}.json"
    try:
        write_atomic(path, json.dumps(data, sort_keys=True))
    except OSError as exc:
        raise LedgerError(f"{path}: cannot spool the run ({exc.strerror or exc})") from None
    return SpooledRun(path, record, final_image, config, claim)


def spooled_runs(ledger_path: Path) -> list[SpooledRun]:
    """Every spooled run of the ledger, oldest first; a damaged entry is a LedgerError."""
    return [_read(path) for path in _entries(ledger_path)]


def pending_spool(ledger_path: Path) -> int:
    """How many runs wait in the ledger's spool (entries are not read: readers only count)."""
    return len(_entries(ledger_path))


def _entries(ledger_path: Path) -> list[Path]:
    folder = spool_dir(ledger_path)
    if not folder.is_dir():
        return []
    return sorted(path for path in folder.glob("*.json") if path.is_file())


def _others(ledger_path: Path) -> list[Path]:
    """Whatever else is in the spool directory (a spool write in progress aside)."""
    folder = spool_dir(ledger_path)
    if not folder.is_dir():
        return []
    entries = set(_entries(ledger_path))
    return sorted(
        path
        for path in folder.iterdir()
        if path not in entries and not path.name.endswith(TEMP_SUFFIX)
    )


@dataclass(frozen=True)
class Drained:
    """What one drain did: the records it appended (by spool id) and the entries it kept.

    `kept` holds one line per entry the ledger refused or that could not be read; the
    entry stays in the spool for the operator, so nothing is lost by a refusal either.
    """

    appended: dict[str, RunRecord]
    kept: tuple[str, ...] = ()


def drain_spool(ledger: Ledger, must: str | None = None) -> Drained:
    """Append every spooled run, oldest first; the caller holds the writer lock.

    An entry the ledger refuses (a damaged file, a campaign whose pinned facts differ)
    stays in the spool and is named in `kept`; if it is `must`, its error is raised.
    """
    appended: dict[str, RunRecord] = {}
    kept = [f"{path}: not a spooled run; left alone" for path in _others(ledger.path)]
    for path in _entries(ledger.path):
        try:
            spooled = _read(path)
            appended[spooled.spool_id] = _append_spooled(ledger, spooled)
        except LedgerError as exc:
            if path.stem == must:
                raise LedgerError(f"{exc}; the run is kept in {path}") from None
            kept.append(f"{exc}; the run is kept in {path}")
            continue
        path.unlink(missing_ok=True)
    return Drained(appended, tuple(kept))


def drain_ledger(ledger_path: Path) -> Drained:
    """`kaudit ledger drain`: verify the ledger, take its lock and append what waits.

    The chain is verified first, as every writer does before it appends; a writer that
    holds the lock makes this fail at once (its campaign drains the spool itself when
    it ends).
    """
    with Ledger(ledger_path) as ledger, ledger.writer_lock():
        walk_chain(ledger)
        return drain_spool(ledger)


def _append_spooled(ledger: Ledger, spooled: SpooledRun) -> RunRecord:
    """Append one spooled run, unless an earlier drain did before it was killed."""
    record = spooled.record
    cell = (record.campaign, record.model, record.task)
    done = ledger.spooled_record(cell, spooled.spool_id)
    if done is not None:
        return done
    _check_claim(ledger, spooled)
    open_for_append(ledger, record.campaign, spooled.config)
    # After every index the cell has, INVALID ones included: counting only labeled
    # runs put a run after an INVALID one onto that INVALID run's key, refused there.
    taken = [key[3] for key in ledger.latest(record.campaign) if key[:3] == cell]
    index = max(taken) + 1 if taken else 0
    record = spooled.appended_as(index)
    ledger.claim(RunKey(*cell, index))
    ledger.append(record, spooled.final_image)
    return record


def _check_claim(ledger: Ledger, spooled: SpooledRun) -> None:
    """Refuse an entry the ledger did not let start, or whose claim a record already used."""
    record, claim = spooled.record, spooled.claim
    if claim is None:
        raise LedgerError(
            f"{ledger.path}: spooled run {spooled.spool_id} names no claim: the ledger "
            "did not let it start, so it is not appended"
        )
    admits = ledger.claim_cell(claim)
    if admits != (record.campaign, record.task):
        what = "no such claim" if admits is None else f"a claim for {admits[0]}/{admits[1]}"
        raise LedgerError(
            f"{ledger.path}: spooled run {spooled.spool_id} ({record.campaign}/"
            f"{record.task}) names {what}; it is not appended"
        )
    used = ledger.claimed_record(claim)
    if used is not None:
        raise LedgerError(
            f"{ledger.path}: spooled run {spooled.spool_id}: its claim is already used by "
            f"run {used.run_index} of {used.model}/{used.task}; a copy is not appended"
        )


def open_for_append(ledger: Ledger, campaign: str, config: dict[str, Any]) -> None:
    """Open (or check) a campaign a served run goes to: never one of imported runs."""
    stored = ledger.campaign_config(campaign)
    if stored is not None and stored.get("source") == IMPORTED:
        raise LedgerError(
            f"{ledger.path}: campaign {campaign!r} holds imported {IMPORTED} runs; "
            "use another `campaign` name"
        )
    ledger.open_campaign(campaign, config)


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
            None if data.get("claim") is None else str(data["claim"]),
        )
    except (OSError, ValueError, KeyError, TypeError, ValidationError) as exc:
        raise LedgerError(f"{path}: unreadable spooled run ({exc}); move it aside") from None
