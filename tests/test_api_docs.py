"""The Python API's documentation runs: README's notebook audit and every block of docs/api.md.

docs/api.md's ```python blocks are run in order in one process, as a notebook's cells,
in a fresh directory, against the built-in suite with the simulated reference agent;
the README shows the page's first block and the lines it prints.
"""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.test_doc_figures import assert_shown_in_order

ROOT = Path(__file__).resolve().parent.parent


def fenced(markdown: str, language: str, section: str | None = None) -> list[str]:
    """The bodies of the ```language blocks of a page, or of one `## section` of it."""
    if section is not None:
        start = markdown.index(f"## {section}\n")
        end = markdown.find("\n## ", start + 1)
        markdown = markdown[start : end if end != -1 else None]
    return re.findall(rf"```{language}\n(.*?)```", markdown, re.S)


def test_the_documented_notebook_audit_runs_and_prints_what_the_readme_shows(
    tmp_path: Path,
) -> None:
    """Fails if an example stops running (a renamed call or argument, `kaudit.gate`
    shadowed by its subpackage), if the README's block drifts from docs/api.md's or grows
    past 15 lines, if its output drifts from the lines shown, if the resumed audit of
    the hooks block records a run again (it must find every run in the ledger), or if
    the validate and export blocks stop proving the task or writing every run."""
    readme = (ROOT / "README.md").read_text()
    page = (ROOT / "docs" / "api.md").read_text()
    (code,) = fenced(readme, "python", "Use it from Python")
    (shown,) = fenced(readme, "text", "Use it from Python")
    cells = fenced(page, "python")
    assert cells[0] == code
    assert len([line for line in code.splitlines() if line.strip()]) < 15
    (tmp_path / "notebook.py").write_text("\n\n".join(cells))
    env = os.environ | {"PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "notebook.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    printed = done.stdout.splitlines()
    assert_shown_in_order(shown.splitlines(), printed, "README example")
    assert "planned 140 runs, 140 already in the ledger" in printed
    assert "0 new runs; head 140 records" in printed
    assert printed[printed.index("0 new runs; head 140 records") + 1] == "True"
    assert (tmp_path / "report.html").stat().st_size > 0
    assert "35 cells, k=1 miss rate" in " ".join(printed)
    assert "4 passed, 0 failed" in printed
    assert "140 runs exported; ledger head 140 records" in printed
    limit = csv.field_size_limit(1 << 24)  # a row carries its whole transcript
    try:
        with (tmp_path / "runs.csv").open(newline="") as rows:
            assert sum(1 for _ in csv.DictReader(rows)) == 140
    finally:
        csv.field_size_limit(limit)
