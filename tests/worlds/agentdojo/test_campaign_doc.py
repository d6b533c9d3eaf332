"""The simulated banking campaign quoted on docs/agentdojo.md is what its commands print.

The reference agent is seeded, so the commands' output is reproducible: every quoted line
must be a line the documented commands print today (a figure that went stale, a column
added to the report, or a hand edit fails here).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
RUN = "$ kaudit run --suite agentdojo:banking --agent reference --k 8"


def quoted_lines(page: str) -> list[str]:
    """The output lines of the campaign section's two quoted blocks (commands dropped)."""
    start = page.index("## A campaign, and kaudit's verdicts beside AgentDojo's")
    body = page[start : page.index("\n## ", start + 1)]
    blocks = re.findall(r"```\n(.*?)```", body, re.S)
    assert len(blocks) == 2 and blocks[0].startswith(RUN), blocks[:1]
    return [
        line
        for block in blocks
        for line in block.splitlines()
        if line.strip() and line != "..." and not line.startswith(("$ ", "    --"))
    ]


def test_the_quoted_campaign_is_what_the_commands_print(tmp_path: Path) -> None:
    """Fails if a quoted line (the run line, a table row, a disagreement, the miss rates)
    is not printed by `kaudit run` and `kaudit report` as documented, for instance after a
    column was added to the per-pair table without the page being regenerated."""
    kaudit = [sys.executable, "-m", "kaudit"]
    run = [*kaudit, "run", "--suite", "agentdojo:banking", "--agent", "reference", "--k", "8"]
    run += ["--ledger", "banking.sqlite", "--campaign", "banking-reference"]
    ran = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, check=True)
    report = [*kaudit, "report", "banking.sqlite"]
    shown = subprocess.run(report, cwd=tmp_path, capture_output=True, text=True, check=True)
    printed = set((ran.stdout + ran.stderr + shown.stdout).splitlines())
    missing = [line for line in quoted_lines((ROOT / "docs" / "agentdojo.md").read_text())
               if line not in printed]  # fmt: skip
    assert not missing, missing
