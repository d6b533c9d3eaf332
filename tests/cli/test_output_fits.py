"""Terminal output that fits: whole ids at any width, counts in words, help at 80 columns.

Rendered outputs are pinned as snapshots; regenerate with
`KAUDIT_UPDATE_SNAPSHOTS=1 python3 -m pytest tests/cli/test_output_fits.py`.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from kaudit.cli._gate_text import render
from kaudit.cli._tables import print_tables
from kaudit.cli.main import app, eager_app
from kaudit.gate import GateResult
from kaudit.gate._gate import Reason
from kaudit.report import TextTable, to_text
from kaudit.suites import load_suite
from tests.report.conftest import reference_ledger

SNAPSHOTS = Path(__file__).parent / "snapshots"
runner = CliRunner()
TASKS = ("billing/duplicate-payment-refund", "csm/contact-deactivate-scope", "itsm/change-cab-gate")


def matches_snapshot(name: str, rendered: str) -> None:
    snapshot = SNAPSHOTS / name
    if os.environ.get("KAUDIT_UPDATE_SNAPSHOTS"):
        snapshot.write_text(rendered)
    assert rendered == snapshot.read_text()


def table() -> TextTable:
    rows = (
        ("billing/duplicate-payment-refund~distractors", "8", "2", "[0.032, 0.651]", "5"),
        ("csm/case-reassign-scoped", "8", "4", "[0.157, 0.843]", "8"),
    )
    headers = ("task", "n", "completed_damage", "95% CP", "refused_but_mutated")
    return TextTable("cells", headers, rows)


@pytest.mark.parametrize("width", [120, 80, 60, 30])
def test_a_table_keeps_its_ids_whole_at_every_width(width: int) -> None:
    """Fails if any layout cuts or folds an id, or if a layout wider than the terminal is
    chosen while a narrower one exists (headers folded, ids above, stacked)."""
    text = to_text([table()], width=width)
    for task, *_ in table().rows:
        assert any(line.startswith(task) for line in text.splitlines()), text
    ids = max(len(row[0]) for row in table().rows)
    assert all(len(line) <= max(width, ids) for line in text.splitlines()), text
    matches_snapshot(f"table-{width}.txt", text)


def test_a_terminal_too_narrow_for_the_rich_table_gets_the_folded_text() -> None:
    """Fails if the terminal rendering widened the console past the terminal (each row then
    wraps at the terminal's edge) or cut an id with an ellipsis."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80, color_system=None)
    print_tables([table()], console)
    lines = out.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert "billing/duplicate-payment-refund~distractors" in lines
    assert "…" not in out.getvalue()


def test_tasks_list_shows_every_id_whole_when_piped(tmp_path: Path) -> None:
    """Fails if a piped `tasks list` cut ids ('billing/credit-ap…') or dropped a task."""
    result = runner.invoke(app, ["tasks", "list", "--variants"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    ids = [line.split()[0] for line in lines[3:]]
    assert ids == list(load_suite("builtin").with_variants().tasks)
    assert lines[0] == "suite builtin (70 tasks)"
    matches_snapshot("tasks-list.txt", result.output)


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fits") / "audit.sqlite"
    return reference_ledger(path, ("reference",), 3, "builtin", TASKS)


def test_stats_keeps_model_and_task_whole_and_prints_faults_in_words(ledger: Path) -> None:
    """Fails if `stats` cut model or task names (it did even at 120 columns) or printed its
    fault line as a Python dict."""
    result = runner.invoke(app, ["stats", str(ledger)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    for task in TASKS:
        assert any(
            line.startswith(f"simulated:reference  {task} ") for line in result.output.splitlines()
        )
    assert "{" not in result.output and "}" not in result.output
    assert "measure" in result.output and "damage-producing pairs" in result.output


def test_report_rows_fit_an_80_column_terminal(ledger: Path) -> None:
    """Fails if the report's tables are wider than an 80-column terminal (every row then
    wraps) or lose an id."""
    from kaudit.ledger import Ledger, read_runs
    from kaudit.report import terminal_tables

    with Ledger(ledger, readonly=True) as store:
        runs = read_runs(store).runs
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80, color_system=None)
    print_tables(terminal_tables(runs), console)
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    for task in TASKS:
        assert (
            sum(line.strip() == task or line.strip().startswith(task + " ") for line in lines) >= 2
        )


def test_export_says_what_it_wrote_and_the_ledger_head(ledger: Path, tmp_path: Path) -> None:
    """Fails if `export` is silent about what it wrote (or its head line is missing)."""
    out = tmp_path / "runs.csv"
    result = runner.invoke(app, ["export", str(ledger), "--to", "csv", "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"wrote 9 runs as csv to {out}"
    assert re.fullmatch(r"ledger head: 9 records, head [0-9a-f]{64}", lines[1])


def test_a_single_run_is_one_run(tmp_path: Path) -> None:
    """Fails on '1 runs recorded' (the plural is chosen by the count)."""
    ledger = tmp_path / "one.sqlite"
    args = ["run", "--suite", "builtin", "--agent", "reference", "--k", "1", "--tasks", TASKS[0]]
    result = runner.invoke(app, [*args, "--ledger", str(ledger)])
    assert result.exit_code == 0, result.output
    assert "1 run recorded (0 already in the ledger" in result.output


def test_gate_reasons_are_grouped_by_rule_worst_first() -> None:
    """Fails if the gate listed every reason as a Python dict, or its worst cells were not
    the ones shown first."""
    bound = [{"damage": d, "n": 8, "upper": u} for d, u in ((1, 0.5265), (4, 0.8430), (0, 0.3694))]
    reasons = tuple(
        Reason(f"m / t{i}", "max_damage_upper", observed, 0.2) for i, observed in enumerate(bound)
    ) + tuple(Reason(f"m / t{i}", "min_k", 8 - i, 20) for i in range(5)) + (
        Reason("fault timeout_after_commit on any task", "outcomes", {"FAIL_DAMAGE": 1},
               ["PASS", "FAIL_SAFE"], "scenario"),
    )  # fmt: skip
    result = GateResult("autonomous_write", "deny", reasons, ("boundary scope",), runs=40, cells=5)
    text = "\n".join(render(result)) + "\n"
    assert "{" not in text
    lines = text.splitlines()
    assert lines[2] == "    m / t1: 4/8 damage, upper bound 0.843"
    assert lines[6] == "    m / t4: 4"
    matches_snapshot("gate-deny.txt", text)


def command_paths(
    command: typer.core.TyperGroup, path: tuple[str, ...] = ()
) -> list[tuple[str, ...]]:
    subcommands = getattr(command, "commands", None)
    if not subcommands:
        return [path]
    return [p for name, sub in subcommands.items() for p in command_paths(sub, (*path, name))]


def test_every_help_reads_at_80_columns() -> None:
    """Fails if `--help` shows Python types (`<list[str]>`), runs past 80 columns, or keeps
    the docstring's line breaks (which strand single words at 80 columns)."""
    paths = command_paths(typer.main.get_command(eager_app()))
    assert len(paths) >= 20
    for path in paths:
        out = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"}).output
        assert "[str]" not in out and "[Path]" not in out, (path, out)
        assert max(len(line) for line in out.splitlines()) <= 80, (path, out)
        description = out.split("\n\n", 2)[1].splitlines()
        # A rewrapped paragraph's lines are full except its last one.
        assert all(len(line) > 40 for line in description[:-1]), (path, out)
