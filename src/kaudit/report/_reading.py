"""What every reader's result shares: the evidence it stands on and how it renders.

`Report` (`kaudit report`) and `StatsReport` (`kaudit stats`) are two views of ledgers
read through `kaudit.open`; both say whether the chains were verified, how many records
and grades an anchor pins, and which judges graded the runs, and both render as text
from their blocks. That part lives here once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kaudit.grade import JudgeTable
from kaudit.ledger import anchor_json
from kaudit.report._tables import Block, blocks_text

__all__ = ["Reading", "evidence_json"]


@dataclass(frozen=True, kw_only=True)
class Reading:
    """The evidence a reader's result stands on; a subclass adds its numbers and blocks.

    Attributes:
        judges: LLM judges against the state (`kaudit grade`), when the ledger holds grades.
        verified: Whether the physical form, the chains and the anchor were checked before
            any number was taken.
        records: Rows in the (last) ledger's runs chain.
        anchored_records: With an anchor, how many of them it pins; runs after it are not
            counted.
        grades: Grades in the ledger's grades chain.
        anchored_grades: With an anchor, how many grades it pins; the judge tables count
            only those.
    """

    judges: tuple[JudgeTable, ...] = ()
    verified: bool = True
    records: int = 0
    anchored_records: int | None = None
    grades: int = 0
    anchored_grades: int | None = None

    @property
    def grade_anchor(self) -> tuple[int, int | None]:
        """(grades, anchored grades), as `anchor_json` and the anchor note take them."""
        return self.grades, self.anchored_grades

    def blocks(self) -> list[Block]:
        """The text in print order: lines and groups of tables (each view's own)."""
        raise NotImplementedError

    def to_text(self) -> str:
        """The result as plain text, exactly what its command prints into a pipe."""
        return blocks_text(self.blocks())

    def evidence(self) -> dict[str, Any]:
        """The JSON keys on the evidence: judges, `verified: false`, the anchor note."""
        return evidence_json(
            self.judges, self.verified, self.records, self.anchored_records, self.grade_anchor
        )


def evidence_json(
    judges: Sequence[JudgeTable],
    verified: bool,
    records: int,
    anchored_records: int | None,
    grades: tuple[int, int | None] = (0, None),
) -> dict[str, Any]:
    """What every ledger reader's JSON says of its evidence: judges, verification, anchor.

    `grades` is (grades, anchored grades) of the grades chain the judges were read from.
    Each key is left out when it has nothing to say, so a plain read is unchanged.
    """
    return (
        ({"judges": [t.to_json() for t in judges]} if judges else {})
        | ({} if verified else {"verified": False})
        | anchor_json(records, anchored_records, *grades)
    )
