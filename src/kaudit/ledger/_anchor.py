"""Ledger anchors: the (record count, head hash) of each chain kept outside the file.

An anchor copied somewhere the ledger's writer cannot rewrite (a git commit, a CI
artifact) pins the runs chain and, once runs are graded, the grades chain beside it:
removing the anchored entry or anything before it, or rewriting history and recomputing
every hash, no longer matches it. A signature with an ed25519 key pins the anchor itself,
so it can travel next to the ledger. `AnchorCheck` is the one check of a chain against
its pinned entry, used by both walks.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaudit.errors import LedgerError

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
GENESIS = "0" * 64
"""The previous hash of a chain's first entry, and the head of an empty chain."""


@dataclass(frozen=True)
class Anchor:
    """The chains' heads, as `kaudit ledger head` prints them.

    `records` and `head` pin the runs chain (`records` is -1 for a bare head hex, which
    pins a hash at no known position). `grades` and `grades_head` pin the grades chain;
    0 and None (an anchor taken before any grade, or written before grades were anchored)
    pin none of it, so every grade is then unanchored.
    """

    records: int
    head: str
    signature: str | None = None
    grades: int = 0
    grades_head: str | None = None

    def message(self) -> bytes:
        """The bytes a signature covers: a fixed prefix, each pinned count and head.

        Without grades it is the message anchors were always signed over, so their
        signatures still check; with grades, removing them changes it.
        """
        text = f"kaudit-ledger-head\n{self.records}\n{self.head}"
        if self.grades:
            text += f"\ngrades\n{self.grades}\n{self.grades_head}"
        return text.encode()

    def to_json(self) -> dict[str, Any]:
        """`{"records": N, "head": HEX}`, `grades` and `grades_head` when any, `signature`."""
        data: dict[str, Any] = {"records": self.records, "head": self.head}
        if self.grades:
            data |= {"grades": self.grades, "grades_head": self.grades_head}
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
            raise LedgerError(f"`head` {value!r} is neither a sha256 hex, JSON nor a file")
        try:
            value = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise LedgerError(f"{path}: cannot read the anchor ({exc})") from None
    if _HEX64.match(value):
        return Anchor(records=-1, head=value)
    try:
        data = json.loads(value)
    except json.JSONDecodeError as exc:
        raise LedgerError(f"`head` is not valid JSON ({exc.msg})") from None
    return _anchor_from_json(data)


def _anchor_from_json(data: Any) -> Anchor:
    if not isinstance(data, dict):
        raise LedgerError("`head` is not a JSON object with records and head")
    records, head, signature = data.get("records"), data.get("head"), data.get("signature")
    if not isinstance(records, int) or not _is_count(records):
        raise LedgerError(f"`head` needs 'records' as a count, got {records!r}")
    if not isinstance(head, str) or not _HEX64.match(head):
        raise LedgerError(f"`head` needs 'head' as a sha256 hex, got {head!r}")
    if signature is not None and not isinstance(signature, str):
        raise LedgerError("`head` needs 'signature' as a hex string")
    grades, grades_head = _grades_pin(data)
    return Anchor(records, head, signature, grades, grades_head)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _grades_pin(data: dict[str, Any]) -> tuple[int, str | None]:
    """(grades, grades_head) of an anchor's JSON: both or neither; (0, None) when absent."""
    grades, head = data.get("grades", 0), data.get("grades_head")
    if not isinstance(grades, int) or not _is_count(grades):
        raise LedgerError(f"`head` needs 'grades' as a count, got {grades!r}")
    if grades == 0:
        if head not in (None, GENESIS):
            raise LedgerError("`head` gives 'grades_head' but 'grades' is 0")
        return 0, None
    if not isinstance(head, str) or not _HEX64.match(head):
        raise LedgerError(f"`head` needs 'grades_head' as a sha256 hex, got {head!r}")
    return grades, head


class PastAnchorError(LedgerError):
    """A chain holds an entry after the one its anchor pins, and the prefix was not asked for.

    Nothing outside the file vouches for such an entry, so a reader given the anchor
    refuses the ledger instead of printing numbers beside it. `position` is the first
    such entry (its record or grade number), `entry_hash` its hash, `anchored` how many
    entries the anchor pins; `noun` is `record` or `grade`.
    """

    def __init__(
        self, path: Path, noun: str, position: int, entry_hash: str, anchored: int
    ) -> None:
        self.path = path
        self.noun = noun
        self.position = position
        self.entry_hash = entry_hash
        self.anchored = anchored
        super().__init__(
            f"{self.problem}; anchor the ledger again to count it, or read only what the "
            "anchor pins (`anchored_prefix=True`)"
        )

    @property
    def problem(self) -> str:
        """What is wrong, without the way to read anyway."""
        noun = self.noun
        if self.anchored == 0:
            pins = f"no {noun}"
            if noun == "grade":
                pins += " (it was taken before grading, or pins the runs chain only)"
        else:
            pins = f"{noun} 1" if self.anchored == 1 else f"{noun}s 1-{self.anchored}"
        return (
            f"{self.path}: {noun} {self.position} ({self.entry_hash[:12]}…) comes after the "
            f"anchor, which pins {pins}: nothing outside the file vouches for it"
        )


class AnchorCheck:
    """Whether a chain still holds its anchored entry at its position, as it is walked.

    One check for both chains: `noun` words the messages (`record` in the runs chain,
    `grade` in the grades chain). `position` -1 (a bare head hex) accepts the hash at
    any position; `position` 0 pins nothing, so every entry is after the anchor. An
    entry after the anchored one raises `PastAnchorError`, unless `prefix_only`: then
    the caller reads the anchored prefix alone and leaves such entries out.
    """

    def __init__(
        self,
        path: Path,
        position: int,
        head: str | None,
        noun: str = "record",
        *,
        prefix_only: bool = False,
    ) -> None:
        self.path = path
        self.position = position
        self.head = head or GENESIS
        self.noun = noun
        self.prefix_only = prefix_only
        self.seen = position == 0 and self.head == GENESIS

    def row(self, count: int, head: str) -> None:
        """Entry `count` (its position) has hash `head`; raises if the anchor disagrees.

        An entry after the anchored one raises `PastAnchorError` unless `prefix_only`.
        """
        if self.seen:
            if not self.prefix_only:
                raise PastAnchorError(self.path, self.noun, count, head, count - 1)
            return
        if self.position in (count, -1) and head == self.head:
            self.seen = True
        elif self.position == count:
            chain = "chain" if self.noun == "record" else f"{self.noun} chain"
            raise LedgerError(
                f"{self.path}: {self.noun} {count} has head {head[:16]}… but the anchor says "
                f"{self.head[:16]}…: the {chain} was rewritten"
            )

    def end(self, count: int) -> None:
        """The walk ended after `count` entries: the anchored one must have been met."""
        if self.seen:
            return
        if self.position > count:
            raise LedgerError(
                f"{self.path}: truncated: the anchor's {self.noun} {self.position} is missing "
                f"(the ledger has {count} {self.noun}s)"
            )
        raise LedgerError(
            f"{self.path}: the anchored head {self.head[:16]}… is not in the chain: "
            f"its {self.noun} was removed or rewritten"
        )
