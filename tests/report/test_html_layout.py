"""The HTML report's layout in headless Chromium at 1280 px: no page-wide horizontal
scroll, and no figure legend covering a plot area."""

from __future__ import annotations

import base64
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from kaudit.ledger import Ledger
from kaudit.report import HtmlOptions, html_report
from tests.report.conftest import reference_ledger

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]

# Each axes group's first rectangle is its plot area; legends are their own groups.
BOXES = """() => {
  const box = r => ({x0: r.left, y0: r.top, x1: r.right, y1: r.bottom});
  const plots = [...document.querySelectorAll('g.axes')].map(
    g => box(g.querySelector('rect.plot').getBoundingClientRect()));
  const legends = [...document.querySelectorAll('g.legend')].map(
    g => box(g.getBoundingClientRect()));
  return {plots, legends};
}"""


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    """Whether two boxes share more than a pixel's sliver."""
    return min(a["x1"], b["x1"]) - max(a["x0"], b["x0"]) > 1 and (
        min(a["y1"], b["y1"]) - max(a["y0"], b["y0"]) > 1
    )


@pytest.fixture(scope="module")
def page_html(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not shutil.which("chromium"):
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (apt-get install -y chromium)")
        pytest.skip("chromium is not installed")
    tmp = tmp_path_factory.mktemp("layout")
    path = reference_ledger(tmp / "a.sqlite", ("reference", "reference:b"), 2, "builtin")
    with Ledger(path) as ledger:
        page = html_report(ledger.records(), HtmlOptions(bootstrap=100))
    html = tmp / "report.html"
    html.write_text(page)
    return html


def test_the_report_fits_a_1280_px_window_and_no_legend_covers_a_plot(page_html: Path) -> None:
    """Fails if the page scrolls sideways at 1280 px (the cells table once pushed it past
    1400 px) or a legend sits on a plot area (the severity legend once covered the HIGH
    bars); checked in the browser on every figure's own SVG."""
    from playwright.sync_api import sync_playwright

    svgs = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page_html.read_text())
    assert len(svgs) >= 5
    with tempfile.TemporaryDirectory(prefix="kaudit-chromium-") as profile, sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1280, "height": 900},
        )  # fmt: skip
        page = context.new_page()
        page.goto(page_html.resolve().as_uri())
        page.wait_for_load_state("load")
        scroll = page.evaluate("document.documentElement.scrollWidth")
        inner = page.evaluate("window.innerWidth")
        figures = []
        for data in svgs:
            page.set_content(base64.b64decode(data).decode())
            figures.append(page.evaluate(BOXES))
        context.close()
    assert scroll <= inner, f"page is {scroll} px wide in a {inner} px window"
    for index, found in enumerate(figures):
        assert found["plots"], f"figure {index} has no plot area"
        for legend in found["legends"]:
            covered = [plot for plot in found["plots"] if overlap(legend, plot)]
            assert covered == [], f"figure {index}: legend {legend} covers {covered}"
