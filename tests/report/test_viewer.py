from __future__ import annotations

import re

from kaudit.report import declared_refusal_but_mutated, diff_rows, run_viewer
from kaudit.report._viewer import unpacked_runs
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


def test_agent_text_reaches_the_page_escaped() -> None:
    """Bug caught: transcript, tool arguments or results interpolated as raw HTML."""
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
    page = outer + unpacked_runs(viewer)
    assert "<script" not in page and "<img" not in page and "<i>" not in page
    assert page.count("&lt;script&gt;") >= 5
