"""The public API in `kaudit/__init__.py`: cheap to import, and each call keeps its word."""

from __future__ import annotations

import asyncio
import csv
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import kaudit
from kaudit.cli.main import app
from kaudit.errors import KauditError, SpecError
from kaudit.suites import Suite


def test_import_kaudit_loads_no_library_room() -> None:
    """Fails if `kaudit/__init__.py` imports its API eagerly: numpy would then load
    before the CLI limits OpenBLAS to one thread, and `kaudit report` would pay for the
    harness and the agents."""
    code = (
        "import sys, kaudit; print(sorted(m for m in sys.modules "
        "if m == 'numpy' or m.startswith(('kaudit.harness', 'kaudit.report', 'kaudit.agents'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_public_names_are_the_documented_few() -> None:
    """Fails if a name is added to (or lost from) the public surface unnoticed, or if a
    lazily imported name is not the function behind it."""
    assert kaudit.__all__ == [
        "AuditHooks", "AuditPlan", "AuditResult", "Report", "RunKey", "Snapshot", "Usage",
        "audit", "compare", "decide", "export", "judge", "open", "plan", "read",
        "serve_run", "summarize", "validate",
    ]  # fmt: skip
    from kaudit.gate._ledger import gate_ledger
    from kaudit.report._stats_report import summarize_sources

    assert kaudit.decide is gate_ledger
    assert kaudit.summarize is summarize_sources
    for room in ("kaudit.gate", "kaudit.stats", "kaudit.grade", "kaudit.serve"):  # no shadows
        importlib.import_module(room)
    assert (kaudit.decide, kaudit.summarize) == (gate_ledger, summarize_sources)
    assert callable(kaudit.serve_run) and callable(kaudit.plan)
    from kaudit.grade._call import judge_ledger

    assert kaudit.judge is judge_ledger


def test_an_audit_inside_a_running_event_loop_runs(mini_suite: Suite, tmp_path: Path) -> None:
    """A notebook runs an event loop; fails if `audit` calls `asyncio.run` on that
    thread ("cannot be called from a running event loop") or opens the ledger on one
    thread and uses it on another (SQLite refuses)."""

    async def notebook_cell() -> kaudit.AuditResult:
        return kaudit.audit(mini_suite, ["reference"], k=2, ledger=tmp_path / "a.sqlite")

    result = asyncio.run(notebook_cell())
    assert (result.recorded, result.interrupted, result.head.records) == (2, False, 2)
    assert result.report().summary.runs == 2


INTERRUPTED = """
import sys
import kaudit
import tests.mini_world
from pathlib import Path
from kaudit.suites import load_yaml_suite

class InterruptAfterFirst(kaudit.AuditHooks):
    def record(self, record):
        raise KeyboardInterrupt

suite = load_yaml_suite(Path(sys.argv[1]), "mini")
cut = kaudit.audit(suite, ["reference"], k=3, ledger=sys.argv[2], hooks=InterruptAfterFirst())
print(cut.interrupted, cut.recorded, cut.counts, cut.head.records)
done = kaudit.audit(suite, ["reference"], k=3, ledger=sys.argv[2])
print(done.interrupted, done.recorded, done.head.records)
"""


def test_an_interrupted_audit_keeps_its_runs_and_says_so(tmp_path: Path) -> None:
    """Fails if Ctrl-C escapes `audit` (a notebook loses the result) or if the result
    claims runs the ledger does not hold; the same call then resumes to k. (In a
    process of its own: an interrupt inside an event loop upsets CPython 3.11's parser
    for the rest of the process.)"""
    suite = Path(__file__).parent / "fixtures" / "mini_suite"
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED, str(suite), str(tmp_path / "a.sqlite")],
        cwd=Path(__file__).parent.parent, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True 1 None 1", "False 2 3"]


def test_the_text_report_is_what_the_cli_prints(mini_suite: Suite, tmp_path: Path) -> None:
    """Fails if the CLI and `Report.to_text` draw the report differently (a line or a
    table one of them forgets, another order)."""
    ledger = tmp_path / "a.sqlite"
    kaudit.audit(mini_suite, ["reference"], k=2, ledger=ledger, faults="fail_before_commit:0.5")
    printed = CliRunner().invoke(app, ["report", str(ledger)])
    assert printed.exit_code == 0, printed.output
    assert printed.output == kaudit.read(ledger).to_text()


def test_bad_audit_input_names_what_is_wrong(mini_suite: Suite, tmp_path: Path) -> None:
    """Fails if a bad fault item or an identity the world cannot serve reaches the ledger
    instead of being refused before the first run, naming the item or the field."""
    ledger = tmp_path / "a.sqlite"
    with pytest.raises(KauditError, match="nope"):
        kaudit.audit(mini_suite, ["reference"], k=1, ledger=ledger, faults="nope")
    from kaudit.spec import Identity

    bad = Identity(role="clerk", scope={"no_such_column": "x"})
    with pytest.raises(SpecError, match="no_such_column"):
        kaudit.audit(mini_suite, ["reference"], k=1, ledger=ledger, identity=bad)
    assert not ledger.exists()


def test_stats_prints_what_summarize_renders(
    mini_suite: Suite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fails if `kaudit stats` and `kaudit.summarize` part ways: a line the CLI adds
    itself (the fault exposure, the anytime caption), an option it passes differently
    (k, the bootstrap seed), or JSON the library builds otherwise."""
    ledger = tmp_path / "a.sqlite"
    kaudit.audit(mini_suite, ["reference"], k=3, ledger=ledger, faults="fail_before_commit:0.5")
    args = ["stats", str(ledger), "--bootstrap", "50", "--k", "1,2", "--seed", "7"]
    printed = CliRunner().invoke(app, args)
    assert printed.exit_code == 0, printed.output
    pooled = kaudit.summarize([ledger], bootstrap=50, k=[1, 2], seed=7)
    assert printed.stdout == pooled.to_text()
    assert "fault fail_before_commit:" in printed.stdout
    as_json = CliRunner().invoke(app, [*args, "--json"])
    from kaudit.cli._common import print_json

    print_json(pooled.to_json())
    assert as_json.stdout == capsys.readouterr().out
    assert json.loads(as_json.stdout)["exposure"]["faults"]


def test_a_validation_miss_is_a_result_also_inside_an_event_loop(tmp_path: Path) -> None:
    """Fails if `validate` raises on a miss (a notebook loses every other check), calls
    `asyncio.run` on a thread that runs a loop, or reports otherwise than the CLI."""
    fixture = Path(__file__).parent / "fixtures" / "mini_suite" / "close_account.yaml"
    text = fixture.read_text().replace("    expected: open\n", "    expected: opened\n")
    (tmp_path / "t.yaml").write_text(text)

    async def notebook_cell() -> kaudit.harness.SuiteValidation:
        return kaudit.validate(str(tmp_path), variants=False, lint=False)

    checked = asyncio.run(notebook_cell())
    oracle = checked.checks[0]
    assert (oracle.script, oracle.passed, checked.failed) == ("oracle", False, 1)
    assert checked.passed == len(checked.checks) - 1
    args = ["validate", "--suite", str(tmp_path), "--no-variants", "--no-lint", "--json"]
    printed = CliRunner().invoke(app, args)
    assert printed.exit_code == 1
    assert json.loads(printed.stdout) == checked.to_json()


def test_export_writes_what_both_export_commands_print(mini_suite: Suite, tmp_path: Path) -> None:
    """Fails if the library and the commands export differently (another row shape,
    superseded attempts, records past the anchor) or miscount what went out."""
    ledger = tmp_path / "a.sqlite"
    first = kaudit.audit(mini_suite, ["reference"], k=2, ledger=ledger)
    kaudit.audit(mini_suite, ["reference"], k=3, ledger=ledger, campaign="later")
    rows = kaudit.export(ledger)
    assert (rows.runs, rows.head.records, rows.records) == (5, 5, 5)
    assert rows.text == CliRunner().invoke(app, ["export", str(ledger)]).stdout
    records = kaudit.export(ledger, shape="records", campaign="later")
    shown = CliRunner().invoke(app, ["ledger", "export", str(ledger), "--campaign", "later"])
    assert (records.runs, records.text) == (3, shown.stdout)
    with pytest.raises(KauditError, match=r"record 3 .* comes after the anchor"):
        kaudit.export(ledger, "csv", tmp_path / "runs.csv", head=first.head)
    assert not (tmp_path / "runs.csv").exists()
    out = tmp_path / "runs.csv"
    anchored = kaudit.export(ledger, "csv", out, head=first.head, anchored_prefix=True)
    assert (anchored.runs, anchored.anchored_records, anchored.text) == (2, 2, None)
    with (tmp_path / "runs.csv").open(newline="") as written:
        assert [row["campaign"] for row in csv.DictReader(written)] == ["default"] * 2
