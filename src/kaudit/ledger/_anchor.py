"""Ledger anchors: the (record count, head hash) pair kept outside the file, optionally signed.

An anchor copied somewhere the ledger's writer cannot rewrite (a git commit, a CI
artifact) pins the chain: removing the anchored record or anything before it, or
rewriting history and recomputing every hash, no longer matches it. A signature with an
ed25519 key pins the anchor itself, so it can travel next to the ledger.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaudit.errors import LedgerError

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Anchor:
    """The chain's head after `records` records, as `kaudit ledger head` prints it."""

    records: int
    head: str
    signature: str | None = None

    def message(self) -> bytes:
        """The bytes a signature covers: a fixed prefix, the count and the head."""
        return f"kaudit-ledger-head\n{self.records}\n{self.head}".encode()

    def to_json(self) -> dict[str, Any]:
        """`{"records": N, "head": HEX}`, plus `signature` when signed."""
        data: dict[str, Any] = {"records": self.records, "head": self.head}
        if self.signature is not None:
            data["signature"] = self.signature
        return data


def parse_anchor(text: str) -> Anchor:
    """An anchor from a head hex, the JSON of `ledger head --json`, or a file holding either.

    A bare hex anchors the chain's last record only by its hash; the JSON form also
    fixes its position, which is what makes truncation detectable.
    """
    value = text.strip()
    if not value.startswith("{") and not _HEX64.match(value):
        path = Path(value)
        if not path.is_file():
            raise LedgerError(f"--head: {value!r} is neither a sha256 hex, JSON nor a file")
        try:
            value = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise LedgerError(f"{path}: cannot read the anchor ({exc})") from None
    if _HEX64.match(value):
        return Anchor(records=-1, head=value)
    try:
        data = json.loads(value)
    except json.JSONDecodeError as exc:
        raise LedgerError(f"--head: not valid JSON ({exc.msg})") from None
    return _anchor_from_json(data)


def _anchor_from_json(data: Any) -> Anchor:
    if not isinstance(data, dict):
        raise LedgerError("--head: expected a JSON object with records and head")
    records, head, signature = data.get("records"), data.get("head"), data.get("signature")
    if not isinstance(records, int) or isinstance(records, bool) or records < 0:
        raise LedgerError(f"--head: 'records' must be a count, got {records!r}")
    if not isinstance(head, str) or not _HEX64.match(head):
        raise LedgerError(f"--head: 'head' must be a sha256 hex, got {head!r}")
    if signature is not None and not isinstance(signature, str):
        raise LedgerError("--head: 'signature' must be a hex string")
    return Anchor(records=records, head=head, signature=signature)
