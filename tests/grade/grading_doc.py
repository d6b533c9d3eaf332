"""The measured grading runs quoted in docs/grading.md, read back and checked.

A real judge's answers change from build to build, so the quoted numbers cannot be
pinned; what is checked is that each quoted output is one `kaudit grade` + `kaudit
report` could print: the summary line's shape, the table's header, and every figure a
row derives from its counts (share called safe, its exact interval, kappa and its seeded
bootstrap interval) recomputed with kaudit's own functions. The real-model test runs the
documented commands and checks its own output the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kaudit.grade._agreement import kappa_interval
from kaudit.report._judging import _HEADERS, _interval, _num
from kaudit.stats import clopper_pearson, cohen_kappa
from kaudit.stats._agreement import Agreement

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "grading.md"
SECTION = "## A real grading run"

SUMMARY = re.compile(
    r"judge (?P<key>\S+): (?P<graded>\d+) graded, (?P<failed>\d+) failed \(recorded, never "
    r"counted\), (?P<skipped>\d+) already graded; tokens (?P<input>[\d,]+) in / "
    r"(?P<output>[\d,]+) out, (?P<retries>\d+) retries, judge cost \$(?P<cost>[\d,]+\.\d{4})"
    r"(?:, judge time (?P<time>[\d,]+\.\d) s)?"
)
HEAD = re.compile(
    r"ledger head: \d+ records, head [0-9a-f]{64}; \d+ grades, grades head [0-9a-f]{64}"
)
HEADER = [f"95% {h}" if h.endswith("CI") else h for h in _HEADERS]


@dataclass(frozen=True)
class Measurement:
    """One `### ` subsection of the real-run section: its commands and quoted output."""

    title: str
    commands: list[str]
    output: list[str]


def measurements(text: str | None = None) -> list[Measurement]:
    """Each subsection of the section that holds a ```bash block and a ```text block."""
    page = DOC.read_text() if text is None else text
    start = page.index(SECTION + "\n")
    end = page.find("\n## ", start + 1)
    body = page[start : end if end != -1 else None]
    found = []
    for part in re.split(r"\n### ", body)[1:]:
        bash = re.findall(r"```bash\n(.*?)```", part, re.S)
        quoted = re.findall(r"```text\n(.*?)```", part, re.S)
        if bash and quoted:
            title = part.splitlines()[0]
            found.append(Measurement(title, bash[0].splitlines(), quoted[0].splitlines()))
    return found


@dataclass(frozen=True)
class Row:
    """One row of the judge-vs-state table, as printed."""

    grader: str
    cells: list[str]

    def count(self, column: str) -> int:
        return int(self.cells[HEADER.index(column) - 1])

    def shown(self, column: str) -> str:
        return self.cells[HEADER.index(column) - 1]


def table_rows(lines: list[str]) -> list[Row]:
    """The rows of the first judge-vs-state table in `lines` (after its header)."""
    at = next(i for i, line in enumerate(lines) if re.split(r"\s{2,}", line.strip()) == HEADER)
    rows = []
    for line in lines[at + 1 :]:
        if not line.strip():
            break
        if set(line.strip()) <= {"-", " "}:
            continue  # the rule under the header (a quoted table may leave it out)
        grader, *cells = re.split(r"\s{2,}", line.strip())
        assert len(cells) == len(HEADER) - 1, line
        rows.append(Row(grader, cells))
    return rows


def check_row(row: Row) -> None:
    """Every derived figure of `row` is what kaudit computes from the row's counts."""
    damage, safe = row.count("state damage"), row.count("called safe")
    both, only, neither = row.count("both damage"), row.count("grader only"), row.count("neither")
    cannot = row.count("cannot tell")
    assert row.count("runs") == both + only + safe + neither + cannot, row
    assert both + safe <= damage <= both + safe + cannot, row
    assert row.shown("share called safe") == (_num(safe / damage) if damage else "—"), row
    assert row.shown("95% CI") == _interval(clopper_pearson(safe, damage, 0.05)), row
    table = Agreement(both, only, safe, neither, cohen_kappa(both, only, safe, neither))
    assert row.shown("kappa") == _num(table.kappa), row
    assert row.shown("95% kappa CI") == _interval(kappa_interval(table, 0.05)), row


def check_output(lines: list[str], anchored: bool = True) -> tuple[re.Match[str], list[Row]]:
    """The summary line and the table of one grading output, each checked; returns both.

    The judge row answers for what the summary says was graded and failed; each keyword
    baseline row covers every counted run (the graded and the failed ones). With
    `anchored`, the output must show the anchor line naming both chain heads.
    """
    summary = next(m for m in map(SUMMARY.fullmatch, lines) if m is not None)
    if anchored:
        assert any(HEAD.fullmatch(line) for line in lines), "no anchor line naming both heads"
    rows = table_rows(lines)
    judges = [r for r in rows if r.grader.startswith("judge ")]
    baselines = [r for r in rows if r.grader.endswith("(keyword baseline)")]
    assert len(judges) == 1 and len(baselines) == 2 and len(rows) == 3, rows
    graded, failed = int(summary["graded"]), int(summary["failed"])
    assert (judges[0].count("runs"), judges[0].count("failed")) == (graded, failed)
    for baseline in baselines:
        assert baseline.count("runs") == graded + failed + int(summary["skipped"])
    for row in rows:
        check_row(row)
    return summary, rows
