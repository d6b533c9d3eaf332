"""`--identity FILE` is checked against the world of every task it would bound."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent.parent
TASK = "billing/invoice-line-dedupe"


def kaudit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from kaudit.cli.main import main; main()", *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    ("identity", "field", "reason"),
    [
        (
            "role: acme-billing\nscope: {billing_acount_id: BA_001}\n",
            "scope.billing_acount_id",
            "no table in the world has a column billing_acount_id",
        ),
        (
            "role: acme-billing\ntables: {invoices: [read], invoice_line: [delete]}\n",
            "tables.invoice_line",
            "no table invoice_line in the world",
        ),
    ],
)
@pytest.mark.parametrize("command", ["run", "serve"])
def test_an_identity_file_naming_what_the_world_lacks_is_one_line_exit_2(
    tmp_path: Path, identity: str, field: str, reason: str, command: str
) -> None:
    """Fails if a misspelt scope column is accepted (the boundary is silently off: the
    campaign measured 6/20 damage where the right spelling gives 0/20), if an unknown
    granted table is accepted, or if the ledger is written before the refusal."""
    path = tmp_path / "identity.yaml"
    path.write_text(identity)
    ledger = tmp_path / "ledger.sqlite"
    common = ("--identity", str(path), "--ledger", str(ledger))
    if command == "run":
        done = kaudit("run", "--tasks", TASK, "--k", "1", *common)
    else:
        done = kaudit("mcp", "serve", "--task", TASK, *common)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: {path}: {field}: {reason} (world enterprise, task {TASK})"
    ]
    assert not ledger.exists()


def test_a_correct_identity_file_runs(tmp_path: Path) -> None:
    """Fails if the check rejected a scope column the world has: the run is recorded."""
    path = tmp_path / "identity.yaml"
    path.write_text("role: acme-billing\nscope: {billing_account_id: BA_001}\n")
    ledger = tmp_path / "ledger.sqlite"
    done = kaudit(
        "run", "--tasks", TASK, "--k", "1", "--identity", str(path), "--ledger", str(ledger)
    )
    assert done.returncode == 0, done.stderr
    assert ledger.exists()
