"""The monitoring page's worked example is the real output of the commands it shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app

ROOT = Path(__file__).parent.parent
SIMULATE = "kaudit simulate mirage --out mirage/"
MONITOR = (
    "kaudit monitor --audit mirage/audit.sqlite --events mirage/events.jsonl --threshold 0.2"
    " --family 3"
)


def _section() -> str:
    page = (ROOT / "docs" / "monitor.md").read_text()
    start = page.index("## A worked example")
    end = page.find("\n## ", start + 1)
    return page[start : end if end != -1 else None]


def test_the_worked_example_is_the_commands_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails when the simulation, the statuses or the rendering change and the page
    still shows the old numbers."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    simulated = runner.invoke(app, SIMULATE.split()[1:])
    assert simulated.exit_code == 0, simulated.output
    monitored = runner.invoke(app, MONITOR.split()[1:])
    assert monitored.exit_code == 4, monitored.output
    block = f"```console\n$ {SIMULATE}\n{simulated.output}$ {MONITOR}\n{monitored.output}```"
    section = _section()
    assert block in section
    # every number the prose quotes is one the commands printed
    prose = section[section.index(block) + len(block) :]
    decimals = re.findall(r"\d+\.\d{3}", prose)
    shares = re.findall(r"(\d+) of (\d+) outcomes", prose)
    assert decimals and shares, "the explanation quotes the example's numbers"
    for number in decimals:
        assert number in monitored.output, number
    for unobserved, total in shares:
        assert f"in {total} events, {unobserved} unobserved" in monitored.output
