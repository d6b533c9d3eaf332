"""Open an HTML report in headless Chromium, check it, and screenshot it.

`python3 docs/screenshot.py` regenerates docs/images/report.png from a reference campaign
(the README's screenshot); tests/report/test_html_browser.py runs the same `inspect_report`.
Chromium is Debian's `chromium` (`.ci/run` installs it when absent), driven by Playwright
with that executable: no browser download.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.sync_api import ConsoleMessage, sync_playwright

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class PageCheck:
    """What the browser saw on the report page."""

    console_errors: tuple[str, ...]
    requests: tuple[str, ...]
    figures: tuple[str, ...]
    broken_figures: tuple[str, ...]
    runs: int
    cells: int
    flagged_shown: int
    shown_text: str
    script_alerts: int
    probe: Any = None


def inspect_report(
    html: Path, png: Path | None = None, width: int = 1280, probe: str | None = None
) -> PageCheck:
    """Load `html` from disk, record errors and network requests, exercise the filter.

    `probe` is a JavaScript function evaluated once every cell's runs are drawn; what it
    returns is `PageCheck.probe`.
    """
    errors: list[str] = []
    requests: list[str] = []
    dialogs: list[str] = []
    with tempfile.TemporaryDirectory(prefix="kaudit-chromium-") as profile, sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
            viewport={"width": width, "height": 1400},
        )
        page = context.new_page()

        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error":
                errors.append(message.text)

        page.on("console", on_console)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.on(
            "request",
            lambda request: (
                requests.append(request.url)
                if not request.url.startswith(("file:", "data:"))
                else None
            ),
        )
        page.goto(html.resolve().as_uri())
        page.wait_for_load_state("load")
        page.evaluate("window.kauditLoadAll()")  # every cell's runs, unpacked
        figures = page.eval_on_selector_all("figure", "els => els.map(e => e.id)")
        broken = page.eval_on_selector_all(
            "figure img",
            "els => els.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.alt)",
        )
        probed = page.evaluate(probe) if probe is not None else None
        runs = page.locator("#viewer details.run").count()
        cells = page.locator("#viewer details.cell").count()
        if png is not None:
            page.screenshot(path=str(png), full_page=False)
        page.check("#only-flagged")
        page.evaluate("window.kauditLoadAll()")  # the filter has been applied
        flagged = page.eval_on_selector_all(
            "#viewer details.run", "els => els.filter(e => !e.hidden).length"
        )
        shown = page.inner_text("#shown")
        context.close()
    return PageCheck(
        console_errors=tuple(errors),
        requests=tuple(requests),
        figures=tuple(figures),
        broken_figures=tuple(broken),
        runs=runs,
        cells=cells,
        flagged_shown=flagged,
        shown_text=shown,
        script_alerts=len(dialogs),
        probe=probed,
    )


def reference_ledger(path: Path) -> None:
    """The reference campaign of the screenshot: the built-in suite, three simulated agents."""
    from typer.testing import CliRunner

    from kaudit.cli.main import app

    agents = ["--agent", "reference", "--agent", "reference:b", "--agent", "scripted:oracle"]
    args = ["run", "--suite", "builtin", *agents, "--k", "8", "--ledger", str(path)]
    result = CliRunner().invoke(app, args)
    if result.exit_code != 0:
        raise RuntimeError(result.output)


def main() -> int:
    """Regenerate docs/images/report.png; prints what the browser saw."""
    from kaudit.ledger import Ledger
    from kaudit.report import HtmlOptions, html_report

    with tempfile.TemporaryDirectory(prefix="kaudit-shot-") as tmp:
        ledger = Path(tmp) / "audit.sqlite"
        reference_ledger(ledger)
        with Ledger(ledger) as store:
            page = html_report(store.records(), HtmlOptions(title="kaudit report: audit.sqlite"))
        html = Path(tmp) / "report.html"
        html.write_text(page)
        check = inspect_report(html, ROOT / "docs" / "images" / "report.png")
    print(check)
    return 0 if not check.console_errors and not check.broken_figures else 1


if __name__ == "__main__":
    sys.exit(main())
