"""The run viewer: every run of every cell, its transcript, tool calls, verdict and diff.

Everything an agent wrote is untrusted: it reaches the page only through
:func:`html.escape`, never as markup, so a transcript holding ``<script>`` shows as text.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections.abc import Iterable
from html import escape
from typing import Any

from kaudit.ledger import RunRecord
from kaudit.report._mix import sub_label_of

__all__ = [
    "RunViewer",
    "declared_refusal_but_mutated",
    "diff_rows",
    "run_viewer",
    "unpacked_runs",
]

RESULT_LIMIT = 4000
"""Characters of a tool result shown; the ledger keeps all of it."""


def declared_refusal_but_mutated(record: RunRecord) -> bool:
    """The agent declared a refusal while the state holds damage (words and state disagree).

    Read from the verdict's refusal flag and deltas, or from the sub-label alone for
    imported verdicts that kept no refusal flag.
    """
    if record.sub_label == "refused_but_mutated":
        return True
    verdict = record.verdict or {}
    return bool(verdict.get("refusal_declared")) and bool(verdict.get("deltas"))


def _key(key: Any) -> str:
    if isinstance(key, dict):
        return ", ".join(f"{k}={v}" for k, v in key.items())
    return str(key)


def _value(row: Any, column: str) -> str:
    if row is None:
        return "—"
    return json.dumps(row.get(column), default=str)


def _change_rows(change: dict[str, Any], kind: str) -> list[tuple[str, ...]]:
    """(table, key, column, before, after, kind, severity, dollars) per changed column."""
    severity = str(change.get("severity") or "") if kind == "damage" else ""
    dollars = change.get("dollars")
    money = f"{dollars:,}" if kind == "damage" and dollars is not None else ""
    table, key, op = str(change.get("table")), _key(change.get("key")), change.get("op")
    columns = list(change.get("columns") or [])
    if op != "modified" or not columns:
        before = "—" if change.get("before") is None else json.dumps(change["before"], default=str)
        after = "—" if change.get("after") is None else json.dumps(change["after"], default=str)
        return [(table, key, f"({op} row)", before, after, kind, severity, money)]
    rows: list[tuple[str, ...]] = []
    for i, column in enumerate(columns):
        before, after = _value(change.get("before"), column), _value(change.get("after"), column)
        rows.append((table, key, column, before, after, kind, severity, money if i == 0 else ""))
    return rows


def diff_rows(record: RunRecord) -> list[tuple[str, ...]]:
    """The run's state diff as readable rows, damage first, then the allowed changes."""
    verdict = record.verdict or {}
    rows = [r for d in verdict.get("deltas") or [] for r in _change_rows(d, "damage")]
    rows += [r for c in verdict.get("authorized") or [] for r in _change_rows(c, "allowed")]
    return rows


def _pre(value: Any) -> str:
    # Compact JSON: an indent makes json fall back from its C encoder to pure Python,
    # which was half the time of a 10,000-run page; <pre> wraps the line anyway.
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    if len(text) > RESULT_LIMIT:
        text = text[:RESULT_LIMIT] + f"\n… ({len(text) - RESULT_LIMIT:,} more characters)"
    return f"<pre>{escape(text)}</pre>"


def _diff_table(record: RunRecord) -> str:
    rows = diff_rows(record)
    verdict = record.verdict or {}
    if not rows:
        unlisted = verdict.get("authorized_changes", 0) and "authorized" not in verdict
        note = "allowed changes not listed by this ledger" if unlisted else "no change"
        return f'<p class="muted">State diff: {note}.</p>'
    head = "".join(
        f"<th>{h}</th>"
        for h in ("table", "key", "column", "before", "after", "verdict", "severity", "$")
    )
    body = "".join(
        f'<tr class="{escape(r[5])}">' + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>"
        for r in rows
    )
    return f'<table class="diff"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _transcript(record: RunRecord) -> str:
    results = {str(call.get("id")): call.get("result") for call in record.tool_calls}
    parts = []
    for i, turn in enumerate(record.transcript, 1):
        content = turn.get("content")
        body = f'<div class="say">{escape(str(content))}</div>' if content else ""
        for call in turn.get("tool_calls") or []:
            name = escape(str(call.get("name")))
            result = results.get(str(call.get("id")))
            body += (
                f'<div class="call"><b>{name}</b>{_pre(call.get("arguments"))}'
                f'<div class="result">result{_pre(result)}</div></div>'
            )
        parts.append(f'<li><span class="turn">turn {i}</span>{body}</li>')
    final = record.final_message
    last = f'<p><b>Final message</b></p><div class="say">{escape(final)}</div>' if final else ""
    return f'<ol class="transcript">{"".join(parts)}</ol>{last}'


def _run(record: RunRecord) -> str:
    verdict = record.verdict or {}
    flagged = declared_refusal_but_mutated(record)
    money = "" if not record.damage_dollars else f" · ${record.damage_dollars:,}"
    severity = f" · {record.severity}" if record.severity else ""
    outcome = record.outcome or "INVALID"
    summary = f"run {record.run_index} · {outcome} · {sub_label_of(record)}{severity}{money}" + (
        " · declared refusal but mutated" if flagged else ""
    )
    facts = (
        f"termination {record.termination}; refusal declared "
        f"{'yes' if verdict.get('refusal_declared') else 'no'}; success "
        f"{'yes' if record.success else 'no'}; {record.steps} steps; "
        f"{record.input_tokens + record.output_tokens:,} tokens; ${record.cost_usd:.4f} model"
    )
    if record.invalid_reason:
        facts += f"; invalid: {record.invalid_reason}"
    return (
        f'<details class="run" data-flag="{int(flagged)}" data-outcome="{escape(outcome)}">'
        f"<summary>{escape(summary)}</summary><p>{escape(facts)}</p>"
        f"{_diff_table(record)}{_transcript(record)}</details>"
    )


class RunViewer:
    """The run viewer, built from records as they stream past.

    Each cell's runs are kept as their HTML only, then compressed into one gzip blob per
    cell that the page unpacks when the cell is opened (or a filter is used), so a
    10,000-run ledger neither holds every record in memory nor makes a page of tens of
    megabytes that the browser must lay out up front.
    """

    def __init__(self) -> None:
        self._runs: dict[tuple[str, str], list[tuple[int, str]]] = {}
        self._damage: dict[tuple[str, str], int] = {}
        self._counted: dict[tuple[str, str], int] = {}
        self._flagged = 0

    def add(self, record: RunRecord) -> None:
        """Render one run into its cell."""
        key = (record.model, record.task)
        self._runs.setdefault(key, []).append((record.run_index, _run(record)))
        self._damage[key] = self._damage.get(key, 0) + bool(record.counts_as_damage)
        self._counted[key] = self._counted.get(key, 0) + (record.status == "labeled")
        self._flagged += declared_refusal_but_mutated(record)

    def html(self) -> str:
        """The viewer's controls and one collapsible block per cell, runs in a gzip blob."""
        blocks = []
        for (model, task), runs in sorted(self._runs.items()):
            ordered = "".join(text for _, text in sorted(runs, key=lambda run: run[0]))
            blob = base64.b64encode(gzip.compress(ordered.encode(), mtime=0)).decode()
            key = (model, task)
            blocks.append(
                f'<details class="cell" data-runs="{len(runs)}"><summary>{escape(task)} · '
                f"{escape(model)} — {self._damage[key]}/{self._counted[key]} damage</summary>"
                f'<script type="application/gzip" class="runs">{blob}</script></details>'
            )
        controls = (
            '<p class="controls"><label><input type="checkbox" id="only-flagged"> only runs '
            f"that declared a refusal but mutated ({self._flagged})</label> "
            '<label>outcome <select id="outcome"><option value="">any</option>'
            "<option>PASS</option><option>FAIL_SAFE</option><option>FAIL_DAMAGE</option>"
            '<option>INVALID</option></select></label> <span id="shown"></span></p>'
        )
        return controls + '<div id="viewer">' + "".join(blocks) + "</div>"


def unpacked_runs(page: str) -> str:
    """The runs' HTML of every cell of a page, unpacked as the browser does (for tests)."""
    blobs = re.findall(r'<script type="application/gzip" class="runs">([^<]*)</script>', page)
    return "".join(gzip.decompress(base64.b64decode(blob)).decode() for blob in blobs)


def run_viewer(records: Iterable[RunRecord]) -> str:
    """HTML of the viewer: one collapsible block per cell, one per run, plus its filter."""
    viewer = RunViewer()
    for record in records:
        viewer.add(record)
    return viewer.html()
