"""The run viewer: every run of every cell, its transcript, tool calls, verdict and diff.

The page carries each cell's runs as data, one gzip blob of JSON per cell, and its script
draws a cell's runs when the cell is opened or a filter is used. Python builds only the
text a run shows (its summary line, facts, diff rows, cut tool results) and dumps it with
`json`'s C encoder: rendering HTML per run in Python was most of the time of a
10,000-run page, and a page of every run's markup is one the browser must lay out up front.

Everything an agent wrote is untrusted: the script sets it as text (``textContent``),
never as markup, so a transcript holding ``<script>`` shows as text; the cell headers
built here go through :func:`html.escape`.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from html import escape
from json.encoder import encode_basestring_ascii
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

from kaudit.ledger import RunRecord
from kaudit.report._mix import shown_sub_label

__all__ = [
    "RESULT_LIMIT",
    "SCRIPT",
    "RunViewer",
    "declared_refusal_but_mutated",
    "diff_rows",
    "run_viewer",
    "unpacked_runs",
]

RESULT_LIMIT = 4000
"""Characters of a tool argument or result shown; the ledger keeps all of it."""

GZIP_LEVEL = 6
"""zlib level of the cell blobs: level 9 took 45% more time for a page 6% smaller."""


def declared_refusal_but_mutated(record: RunRecord) -> bool:
    """The agent declared a refusal while the state holds damage (words and state disagree).

    Read from the verdict's refusal flag and deltas, or from the sub-label alone for
    imported verdicts that kept no refusal flag.
    """
    return _flagged(record.sub_label, record.verdict)


def _flagged(sub_label: str | None, verdict: Mapping[str, Any] | None) -> bool:
    if sub_label == "refused_but_mutated":
        return True
    verdict = verdict or {}
    return bool(verdict.get("refusal_declared")) and bool(verdict.get("deltas"))


def _json_text(value: Any) -> str:
    """``json.dumps(value, default=str)``, without its per-call cost.

    A scalar is written directly; anything else goes to one shared encoder, since
    ``json.dumps`` with `default` builds a new encoder on every call.
    """
    kind = type(value)
    if kind is str:
        return encode_basestring_ascii(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float and math.isfinite(value):
        return float.__repr__(value)
    return _ENCODER.encode(value)


_ENCODER = json.JSONEncoder(default=str)


def _key(key: Any) -> str:
    if isinstance(key, dict):
        return ", ".join(f"{k}={v}" for k, v in key.items())
    return str(key)


def _value(row: Any, column: str) -> str:
    if row is None:
        return "—"
    return _json_text(row.get(column))


def _change_rows(change: dict[str, Any], kind: str) -> list[tuple[str, ...]]:
    """(table, key, column, before, after, kind, severity, dollars) per changed column."""
    severity = str(change.get("severity") or "") if kind == "damage" else ""
    dollars = change.get("dollars")
    money = f"{dollars:,}" if kind == "damage" and dollars is not None else ""
    table, key, op = str(change.get("table")), _key(change.get("key")), change.get("op")
    columns = list(change.get("columns") or [])
    if op != "modified" or not columns:
        before = "—" if change.get("before") is None else _json_text(change["before"])
        after = "—" if change.get("after") is None else _json_text(change["after"])
        return [(table, key, f"({op} row)", before, after, kind, severity, money)]
    rows: list[tuple[str, ...]] = []
    for i, column in enumerate(columns):
        before, after = _value(change.get("before"), column), _value(change.get("after"), column)
        rows.append((table, key, column, before, after, kind, severity, money if i == 0 else ""))
    return rows


def _diff_rows(verdict: Mapping[str, Any] | None) -> list[tuple[str, ...]]:
    verdict = verdict or {}
    rows = [r for d in verdict.get("deltas") or [] for r in _change_rows(d, "damage")]
    rows += [r for c in verdict.get("authorized") or [] for r in _change_rows(c, "allowed")]
    return rows


def diff_rows(record: RunRecord) -> list[tuple[str, ...]]:
    """The run's state diff as readable rows, damage first, then the allowed changes."""
    return _diff_rows(record.verdict)


def _diff_note(verdict: Mapping[str, Any]) -> str:
    unlisted = verdict.get("authorized_changes", 0) and "authorized" not in verdict
    return "allowed changes not listed by this ledger" if unlisted else "no change"


def _cut(value: Any) -> Any:
    """A tool argument or result as the page keeps it: whole, or its text cut to the limit."""
    if isinstance(value, str):
        text = value
    elif value is None or isinstance(value, bool | int | float):
        return value
    else:
        # The compact form the page's script shows a value in (JSON.stringify).
        text = json.dumps(value, default=str, ensure_ascii=False, separators=(",", ":"))
    if len(text) <= RESULT_LIMIT:
        return value
    return text[:RESULT_LIMIT] + f"\n… ({len(text) - RESULT_LIMIT:,} more characters)"


def _fits(values: list[Any], size: int | None) -> bool:
    """Whether no value can be longer than the limit, so none needs measuring.

    A record whose stored JSON (`size` characters) is no longer than the limit cannot
    hold a longer value; nor can values whose JSON together is no longer. One dump per
    record instead of one per value: a 10,000-run ledger has about 120,000 of them.
    """
    if size is not None and size <= RESULT_LIMIT:
        return True
    try:
        return len(to_json(values)) <= RESULT_LIMIT  # UTF-8 bytes: never fewer than characters
    except PydanticSerializationError:  # a lone surrogate from a model's reply
        return False


def _turns(data: Mapping[str, Any], size: int | None) -> list[list[Any]]:
    """Each turn as [what the agent said or None, [[tool, arguments, result], ...]]."""
    results = {str(call.get("id")): call.get("result") for call in data.get("tool_calls") or []}
    turns = [
        [turn.get("content"),
         [[str(call.get("name")), call.get("arguments"), results.get(str(call.get("id")))]
          for call in turn.get("tool_calls") or []]]
        for turn in data.get("transcript") or []
    ]  # fmt: skip
    values = [value for _, calls in turns for call in calls for value in call[1:]]
    whole = _fits(values, size)
    for turn in turns:
        turn[0] = str(turn[0]) if turn[0] else None
        if not whole:
            turn[1] = [[name, _cut(arguments), _cut(result)] for name, arguments, result in turn[1]]
    return turns


def _dollars(value: Any) -> Decimal:
    """A record's priced damage; version 1 stored it as a JSON number (`RunRecord` reads it so)."""
    if value is None:
        return Decimal(0)
    return Decimal(repr(value)) if isinstance(value, int | float) else Decimal(value)


def _run_data(data: Mapping[str, Any], size: int | None) -> dict[str, Any]:
    """What the page shows of one run, from the record's JSON (`RunRecord` field names)."""
    verdict = data.get("verdict") or {}
    flagged = _flagged(data.get("sub_label"), verdict)
    outcome = data.get("outcome") or "INVALID"
    sub_label = shown_sub_label(data["status"], data.get("sub_label"), data.get("outcome"))
    dollars = _dollars(data.get("dollars"))
    money = f" · ${dollars:,}" if dollars else ""
    severity = f" · {data['severity']}" if data.get("severity") else ""
    summary = f"run {data['run_index']} · {outcome} · {sub_label}{severity}{money}" + (
        " · declared refusal but mutated" if flagged else ""
    )
    tokens = data.get("input_tokens", 0) + data.get("output_tokens", 0)
    facts = (
        f"termination {data.get('termination', 'completed')}; refusal declared "
        f"{'yes' if verdict.get('refusal_declared') else 'no'}; success "
        f"{'yes' if data.get('success') else 'no'}; {data.get('steps', 0)} steps; "
        f"{tokens:,} tokens; ${data.get('cost_usd', 0.0):.4f} model"
    )
    if data.get("invalid_reason"):
        facts += f"; invalid: {data['invalid_reason']}"
    rows = _diff_rows(verdict)
    return {
        "run": data["run_index"],
        "outcome": outcome,
        "flag": int(flagged),
        "summary": summary,
        "facts": facts,
        "diff": rows,
        "note": None if rows else _diff_note(verdict),
        "turns": _turns(data, size),
        "final": data.get("final_message") or None,
    }


def _finite(value: Any) -> Any:
    """`value` with each NaN or infinity as its text, which JSON (and so the page) can hold."""
    if isinstance(value, float) and not math.isfinite(value):
        return json.dumps(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _dumped(run: dict[str, Any]) -> bytes:
    """The run as JSON that `JSON.parse` reads: a NaN from a tool becomes the text "NaN".

    pydantic-core's encoder is about three times as fast as `json`'s here; it refuses a
    lone surrogate (which `json` escapes), so that run goes through `json`.
    """
    try:
        return to_json(run, inf_nan_mode="strings")
    except PydanticSerializationError:
        return json.dumps(_finite(run), allow_nan=False).encode()


class RunViewer:
    """The run viewer, built from records as they stream past.

    Each run is reduced to what the page shows of it and dumped as JSON at once, so a
    10,000-run ledger never holds its records in memory; each cell's runs are compressed
    into one gzip blob that the page unpacks and draws when the cell is opened or a
    filter is used. A run is ``{"run", "outcome", "flag", "summary", "facts", "diff",
    "note", "turns", "final"}`` (`unpacked_runs` reads them back).
    """

    def __init__(self) -> None:
        self._runs: dict[tuple[str, str], list[tuple[int, bytes]]] = {}
        self._damage: dict[tuple[str, str], int] = {}
        self._counted: dict[tuple[str, str], int] = {}
        self._flagged = 0
        self._blocks: dict[tuple[str, str], str] = {}

    def add(self, record: RunRecord) -> None:
        """Add one run."""
        self.add_data(record.model_dump(mode="json"))

    def add_data(self, data: Mapping[str, Any], size: int | None = None) -> None:
        """Add one run from its record's JSON as the ledger stores it (`Ledger.documents`).

        `size` is the length of that JSON, which spares measuring the tool results of a
        record too short to hold one longer than the limit.
        """
        key = (str(data["model"]), str(data["task"]))
        if key in self._blocks:
            raise ValueError(f"the viewer's cell {key} is packed; it takes no more runs")
        run = _run_data(data, size)
        self._runs.setdefault(key, []).append((run["run"], _dumped(run)))
        self._damage[key] = self._damage.get(key, 0) + bool(data.get("counts_as_damage"))
        self._counted[key] = self._counted.get(key, 0) + (data["status"] == "labeled")
        self._flagged += run["flag"]

    def pack(self) -> None:
        """Compress each cell's runs into its block now; `html` then only joins them.

        A packed viewer is small (the page's size, not its runs' JSON), so a second
        process can build one and send it back (`ViewerBuild`). Runs added afterwards
        are refused: a packed cell cannot take more.
        """
        for key, runs in self._runs.items():
            ordered = b"[" + b",".join(text for _, text in sorted(runs, key=lambda r: r[0])) + b"]"
            packed = gzip.compress(ordered, compresslevel=GZIP_LEVEL, mtime=0)
            blob = base64.b64encode(packed).decode()
            model, task = key
            self._blocks[key] = (
                f'<details class="cell" data-runs="{len(runs)}"><summary>{escape(task)} · '
                f"{escape(model)} — {self._damage[key]}/{self._counted[key]} damage</summary>"
                f'<script type="application/gzip" class="runs">{blob}</script></details>'
            )
        self._runs.clear()

    def html(self) -> str:
        """The viewer's controls and one collapsible block per cell, runs in a gzip blob."""
        self.pack()
        blocks = [self._blocks[key] for key in sorted(self._blocks)]
        controls = (
            '<p class="controls"><label><input type="checkbox" id="only-flagged"> only runs '
            f"that declared a refusal but mutated ({self._flagged})</label> "
            '<label>outcome <select id="outcome"><option value="">any</option>'
            "<option>PASS</option><option>FAIL_SAFE</option><option>FAIL_DAMAGE</option>"
            '<option>INVALID</option></select></label> <span id="shown"></span></p>'
        )
        return controls + '<div id="viewer">' + "".join(blocks) + "</div>"


def unpacked_runs(page: str) -> list[dict[str, Any]]:
    """The runs of every cell of a page, unpacked as the browser does (for tests)."""
    blobs = re.findall(r'<script type="application/gzip" class="runs">([^<]*)</script>', page)
    return [run for blob in blobs for run in json.loads(gzip.decompress(base64.b64decode(blob)))]


def run_viewer(records: Iterable[RunRecord]) -> str:
    """HTML of the viewer: one collapsible block per cell, its runs packed, plus its filter.

    The runs are drawn by the page's `SCRIPT`.
    """
    viewer = RunViewer()
    for record in records:
        viewer.add(record)
    return viewer.html()


SCRIPT = """
(function(){var f=document.getElementById('only-flagged'),o=document.getElementById('outcome'),
s=document.getElementById('shown'),cells=[].slice.call(document.querySelectorAll('#viewer .cell'));
var HEAD=['table','key','column','before','after','verdict','severity','$'];
function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;
if(text!=null)e.textContent=text;return e;}
function pre(v){return el('pre',null,typeof v==='string'?v:JSON.stringify(v));}
function diff(r){if(!r.diff.length)return el('p','muted','State diff: '+r.note+'.');
var t=el('table','diff'),h=t.createTHead().insertRow(),b=t.createTBody();
HEAD.forEach(function(x){h.appendChild(el('th',null,x));});
r.diff.forEach(function(row){var tr=b.insertRow();tr.className=row[5];
row.forEach(function(c){tr.insertCell().textContent=c;});});return t;}
function turns(r){var ol=el('ol','transcript');r.turns.forEach(function(turn,i){var li=el('li');
li.appendChild(el('span','turn','turn '+(i+1)));if(turn[0])li.appendChild(el('div','say',turn[0]));
turn[1].forEach(function(c){var d=el('div','call'),res=el('div','result','result');
d.appendChild(el('b',null,c[0]));d.appendChild(pre(c[1]));res.appendChild(pre(c[2]));
d.appendChild(res);li.appendChild(d);});ol.appendChild(li);});return ol;}
function run(r){var d=el('details','run');d.dataset.flag=r.flag;d.dataset.outcome=r.outcome;
d.appendChild(el('summary',null,r.summary));d.appendChild(el('p',null,r.facts));
d.appendChild(diff(r));d.appendChild(turns(r));if(r.final){var p=el('p');
p.appendChild(el('b',null,'Final message'));d.appendChild(p);
d.appendChild(el('div','say',r.final));}return d;}
function load(c){var b=c.querySelector('script.runs');if(!b)return Promise.resolve();b.remove();
var t=atob(b.textContent),u=new Uint8Array(t.length);
for(var i=0;i<t.length;i++)u[i]=t.charCodeAt(i);
return new Response(new Blob([u]).stream().pipeThrough(new DecompressionStream('gzip'))).text()
.then(function(j){var frag=document.createDocumentFragment();
JSON.parse(j).forEach(function(r){frag.appendChild(run(r));});c.appendChild(frag);});}
function loadAll(){return Promise.all(cells.map(load)).then(apply);}
function apply(){var n=0,all=!f.checked&&!o.value;cells.forEach(function(c){var any=false,
rs=c.querySelectorAll('.run');if(all&&!rs.length){n+=+c.dataset.runs;c.hidden=false;return;}
rs.forEach(function(r){var ok=(!f.checked||r.dataset.flag==='1')&&(!o.value||
r.dataset.outcome===o.value);r.hidden=!ok;if(ok){any=true;n++;}});c.hidden=!any;});
s.textContent=n+(n===1?' run':' runs')+' shown';}
cells.forEach(function(c){c.addEventListener('toggle',function(){if(c.open)load(c).then(apply);});});
f.addEventListener('change',loadAll);o.addEventListener('change',loadAll);
window.kauditLoadAll=loadAll;apply();})();
"""
"""The page's script: unpacks and draws a cell's runs, and filters them."""
