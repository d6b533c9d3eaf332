"""The HTML report in a real headless Chromium: loads clean, figures render, filter works."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from kaudit.ledger import Ledger
from kaudit.report import HtmlOptions, html_report
from kaudit.report._viewer import diff_rows
from kaudit.suites import load_suite
from tests.report.conftest import make_record, reference_ledger

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "<script>alert('owned')</script><img src=x onerror=alert(1)>"


def _screenshot_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "kaudit_docs_screenshot", ROOT / "docs/screenshot.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def chromium() -> None:
    if not shutil.which("chromium"):
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (apt-get install -y chromium)")
        pytest.skip("chromium is not installed")


# The hostile run as the browser drew it: its texts, diff rows and any element its text made.
PROBE = """() => {
  const cell = [...document.querySelectorAll('#viewer details.cell')]
    .find(c => c.querySelector('summary').textContent.startsWith('evil/task'));
  const run = cell.querySelector('details.run'), texts = s => [...run.querySelectorAll(s)]
    .map(e => e.textContent);
  const rows = [...run.querySelectorAll('table.diff tbody tr')];
  return {summary: texts('summary')[0], facts: texts('p')[0], says: texts('.say'),
          pres: texts('pre'), tools: texts('.call > b'),
          rows: rows.map(tr => [...tr.cells].map(td => td.textContent)),
          kinds: rows.map(tr => tr.className), flag: run.dataset.flag,
          markup: document.querySelectorAll(
            '#viewer img, #viewer i, #viewer iframe, #viewer script').length};
}"""


def test_report_opens_in_headless_chromium_without_errors(chromium: None, tmp_path: Path) -> None:
    """Bug caught: a JS error, a figure that fails to decode, a network fetch, a dead filter,
    agent text that executes or becomes markup (an alert from the hostile transcript, an
    <img> in the viewer), or the script drawing a run other than the viewer packed it (a
    diff cell, a tool's arguments or its result in the wrong place)."""
    path = reference_ledger(tmp_path / "audit.sqlite", ("reference", "reference:b"), 4, "builtin")
    call = {"id": "1", "name": HOSTILE, "arguments": {"q": HOSTILE, "n": 2}}
    hostile = make_record(
        "evil/task", 0, model="hostile", damage=True, refusal=True, final="REFUSAL: " + HOSTILE,
        transcript=[{"content": HOSTILE, "tool_calls": [call]}], sub_label="refused_but_mutated",
        tool_calls=[call | {"result": {"rows": [HOSTILE]}}], severity="HIGH", dollars=1.0,
        deltas=[{"table": "t", "op": "removed", "key": {"id": 1}, "columns": [],
                 "before": {"id": 1, "name": HOSTILE}, "after": None, "severity": "HIGH",
                 "dollars": 1}],
        authorized=[{"table": "t", "op": "modified", "key": {"id": 2}, "columns": ["name"],
                     "before": {"id": 2, "name": "a"}, "after": {"id": 2, "name": HOSTILE}}],
    )  # fmt: skip
    with Ledger(path) as ledger:
        records = [*ledger.records(), hostile]
    html = tmp_path / "report.html"
    html.write_text(html_report(records, HtmlOptions(bootstrap=200)))
    png = tmp_path / "report.png"
    check = _screenshot_module().inspect_report(html, png, probe=PROBE)
    assert check.console_errors == ()
    assert check.requests == ()
    assert check.script_alerts == 0
    assert check.figures == (
        "fig-forest",
        "fig-heatmap",
        "fig-decay",
        "fig-severity",
        "fig-gradient",
    )
    assert check.broken_figures == ()
    tasks = len(load_suite("builtin").tasks)
    assert check.runs == len(records) == tasks * 4 * 2 + 1
    assert check.cells == tasks * 2 + 1
    flagged = sum(r.sub_label == "refused_but_mutated" for r in records)
    assert check.flagged_shown == flagged >= 1
    assert check.shown_text == f"{flagged} run{'' if flagged == 1 else 's'} shown"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    drawn = check.probe
    assert drawn["markup"] == 0
    assert drawn["summary"] == (
        "run 0 · FAIL_DAMAGE · refused_but_mutated · HIGH · $1.0 · declared refusal but mutated"
    )
    assert drawn["facts"].startswith("termination completed; refusal declared yes; success no")
    assert drawn["rows"] == [list(row) for row in diff_rows(hostile)]
    assert drawn["kinds"] == ["damage", "allowed"] and drawn["flag"] == "1"
    assert drawn["says"] == [HOSTILE, "REFUSAL: " + HOSTILE] and drawn["tools"] == [HOSTILE]
    assert drawn["pres"] == [json.dumps(call["arguments"], separators=(",", ":")),
                             json.dumps({"rows": [HOSTILE]}, separators=(",", ":"))]  # fmt: skip
