from __future__ import annotations

import base64
import gzip
import json
import re

from kaudit.report._viewer import (
    RESULT_LIMIT,
    SCRIPT,
    RunViewer,
    declared_refusal_but_mutated,
    diff_rows,
    run_viewer,
    unpacked_runs,
)
from tests.report.conftest import make_record

HOSTILE = "<script>alert('owned')</script><img src=x onerror=alert(1)>"

DELTA = {
    "table": "credits",
    "op": "modified",
    "key": {"credit_id": "CRD_003"},
    "columns": ["invoice_id", "status"],
    "before": {"credit_id": "CRD_003", "invoice_id": None, "status": "open"},
    "after": {"credit_id": "CRD_003", "invoice_id": "INV_006", "status": "applied"},
    "severity": "HIGH",
    "dollars": 200,
}
ALLOWED = {
    "table": "credits",
    "op": "added",
    "key": {"credit_id": "CRD_900"},
    "columns": [],
    "before": None,
    "after": {"credit_id": "CRD_900", "status": "open"},
}


def test_diff_rows_show_each_changed_column_then_allowed_rows() -> None:
    """Bug caught: before/after swapped, dollars repeated per column, allowed rows dropped."""
    record = make_record("t", 0, damage=True, deltas=[DELTA], authorized=[ALLOWED])
    key, added = "credit_id=CRD_003", '{"credit_id": "CRD_900", "status": "open"}'
    assert diff_rows(record) == [
        ("credits", key, "invoice_id", "null", '"INV_006"', "damage", "HIGH", "200"),
        ("credits", key, "status", '"open"', '"applied"', "damage", "HIGH", ""),
        ("credits", "credit_id=CRD_900", "(added row)", "—", added, "allowed", "", ""),
    ]


def test_refusal_but_mutated_needs_both_the_declaration_and_damage() -> None:
    """Bug caught: flagging every refusal, or every damaging run."""
    both = make_record("t", 0, damage=True, refusal=True, deltas=[DELTA])
    words = make_record("t", 1, refusal=True)
    state = make_record("t", 2, damage=True, deltas=[DELTA])
    imported = make_record("t", 3, damage=True, sub_label="refused_but_mutated")
    cases = (both, words, state, imported)
    assert [declared_refusal_but_mutated(r) for r in cases] == [True, False, False, True]


def test_agent_text_reaches_the_page_only_as_text() -> None:
    """Bug caught: a cell header interpolating the task id as markup, or the page's script
    parsing agent text as HTML (innerHTML, insertAdjacentHTML) instead of setting it as
    text; tests/report/test_html_browser.py renders a hostile run in Chromium."""
    record = make_record(
        "t<i>",
        0,
        final=HOSTILE,
        transcript=[{"content": HOSTILE, "tool_calls": [{"id": "1", "name": HOSTILE,
                                                          "arguments": {"q": HOSTILE}}]}],
        tool_calls=[{"id": "1", "name": HOSTILE, "arguments": {"q": HOSTILE}, "result": HOSTILE}],
        deltas=[DELTA | {"after": {"invoice_id": HOSTILE, "status": HOSTILE}}],
        damage=True,
    )  # fmt: skip
    viewer = run_viewer([record])
    outer = re.sub(
        r'<script type="application/gzip" class="runs">[A-Za-z0-9+/=]*</script>', "", viewer
    )
    assert "<i>" not in outer and "t&lt;i&gt;" in outer
    (run,) = unpacked_runs(viewer)
    assert run["final"] == HOSTILE and run["turns"] == [
        [HOSTILE, [[HOSTILE, {"q": HOSTILE}, HOSTILE]]]
    ]
    assert re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write", SCRIPT) is None


def test_long_tool_results_are_cut_in_the_page_and_short_ones_kept_whole() -> None:
    """Bug caught: a megabyte result carried whole into the page (a 10,000-run page of
    them is no longer a few megabytes), a long result made of short values (a list of
    rows) missed because only strings were measured, or a short one cut."""
    rows = [{"id": i, "name": f"row {i}"} for i in range(400)]
    calls = [
        {"id": "1", "name": "read", "arguments": {"q": "x"}, "result": "y" * 5000},
        {"id": "2", "name": "list", "arguments": {}, "result": rows},
        {"id": "3", "name": "small", "arguments": {}, "result": {"ok": True}},
    ]
    transcript = [{"content": None, "tool_calls": [{k: c[k] for k in ("id", "name",
                                                     "arguments")} for c in calls]}]  # fmt: skip
    (run,) = unpacked_runs(run_viewer([make_record("t", 0, transcript=transcript,
                                                   tool_calls=calls)]))  # fmt: skip
    (_, (text, listed, small)) = run["turns"][0]
    assert text[2] == "y" * RESULT_LIMIT + "\n… (1,000 more characters)"
    dumped = json.dumps(rows, separators=(",", ":"))
    more = len(dumped) - RESULT_LIMIT
    assert listed[2] == dumped[:RESULT_LIMIT] + f"\n… ({more:,} more characters)"
    assert small[2] == {"ok": True} and text[1] == {"q": "x"}


def test_a_nan_in_a_stored_record_does_not_break_the_cells_json() -> None:
    """Bug caught: the viewer writing NaN (which Python's json reads from a ledger row that
    holds one), which JSON.parse refuses, so the whole cell could not be opened."""
    calls = [{"id": "1", "name": "t", "arguments": {}, "result": {"x": 1.0}}]
    transcript = [{"content": None, "tool_calls": [{"id": "1", "name": "t", "arguments": {}}]}]
    data = make_record("t", 0, transcript=transcript, tool_calls=calls).model_dump(mode="json")
    data["tool_calls"][0]["result"] = {"x": float("nan")}
    viewer = RunViewer()
    viewer.add_data(data)
    blob = re.search(r'class="runs">([^<]*)<', viewer.html())
    assert blob is not None
    text = gzip.decompress(base64.b64decode(blob.group(1))).decode()

    def refuse(constant: str) -> None:
        raise ValueError(constant)

    (run,) = json.loads(text, parse_constant=refuse)
    assert run["turns"][0][1][0][2] == {"x": "NaN"}
