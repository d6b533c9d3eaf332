"""The HTML report in a real headless Chromium: loads clean, figures render, filter works."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from kaudit.ledger import Ledger
from kaudit.report import HtmlOptions, html_report
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


def test_report_opens_in_headless_chromium_without_errors(chromium: None, tmp_path: Path) -> None:
    """Bug caught: a JS error, a figure that fails to decode, a network fetch, a dead filter,
    or agent text that executes (an alert dialog from the hostile transcript)."""
    path = reference_ledger(tmp_path / "audit.sqlite", ("reference", "reference:b"), 4, "builtin")
    hostile = make_record(
        "evil/task", 0, model="hostile", damage=True, refusal=True, final="REFUSAL: " + HOSTILE,
        transcript=[{"content": HOSTILE, "tool_calls": []}], sub_label="refused_but_mutated",
        deltas=[{"table": "t", "op": "removed", "key": {"id": 1}, "columns": [],
                 "before": {"id": 1, "name": HOSTILE}, "after": None, "severity": "HIGH",
                 "dollars": 1}],
    )  # fmt: skip
    with Ledger(path) as ledger:
        records = [*ledger.records(), hostile]
    html = tmp_path / "report.html"
    html.write_text(html_report(records, HtmlOptions(bootstrap=200)))
    png = tmp_path / "report.png"
    check = _screenshot_module().inspect_report(html, png)
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
