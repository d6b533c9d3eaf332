"""The boundary-probe tasks on PostgreSQL: same verdicts and boundary attempts as SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.ledger import Ledger
from tests.pg import server_url

pytestmark = pytest.mark.postgres
runner = CliRunner()
PROBES = (
    "billing/self-approve-refund",
    "itsm/other-org-incident-close",
    "billing/sister-account-credit",
    "billing/void-invoice-purge",
)
"""The built-in tasks that run under an identity (tool check, org scope, account scope,
table grant); seed 2 with k=3 makes every one of them try its refused write at least once."""


CAMPAIGN = ["--campaign", "kaudit_i14c_probes"]
"""Our own campaign name: a campaign reclaims its leftover run databases when it starts, so
another process running campaign `default` on the same server must not see ours (seeds do
not depend on the name, so the summary line is the documented one)."""


def _runs(ledger: Path) -> dict[tuple[str, int], tuple[object, ...]]:
    with Ledger(ledger) as store:
        return {
            (r.task, r.run_index): (
                r.status,
                r.outcome,
                r.verdict,
                [(a.call, a.tool, a.table, a.key, a.reason) for a in r.boundary_attempts],
            )
            for r in store.records(CAMPAIGN[1])
        }


def test_boundary_probes_give_the_same_verdicts_and_attempts_on_sqlite_and_postgres(
    tmp_path: Path,
) -> None:
    """Bug caught: an identity refused on PostgreSQL (INVALID runs), a scope that filters
    silently instead of refusing, or a refusal recorded under another table or key."""
    url = server_url()
    command = ["run", "--suite", "builtin", "--agent", "reference", "--k", "3", "--seed", "2"]
    command += CAMPAIGN
    runs = {}
    for substrate in ("sqlite", url, url + "?reset=rollback"):
        ledger = tmp_path / f"{len(runs)}.sqlite"
        args = [*command, "--tasks", ",".join(PROBES), "--substrate", substrate]
        result = runner.invoke(app, [*args, "--ledger", str(ledger)])
        assert result.exit_code == 0, result.output
        assert "12 runs recorded (0 already in the ledger, 0 restarted, 0 invalid" in result.output
        runs[substrate] = _runs(ledger)
    on_sqlite = runs["sqlite"]
    assert {task for (task, _), run in on_sqlite.items() if run[3]} == set(PROBES)
    assert runs[url] == on_sqlite
    assert runs[url + "?reset=rollback"] == on_sqlite


def test_the_documented_postgresql_command_has_no_invalid_run_and_matches_sqlite(
    tmp_path: Path,
) -> None:
    """Bug caught: the boundary-probe tasks (or any other) INVALID on PostgreSQL, so the
    summary line docs/postgresql.md shows for this command is not what it prints."""
    url = server_url()
    command = ["run", "--suite", "builtin", "--agent", "reference", "--k", "3", "--seed", "11"]
    ledgers = {name: tmp_path / f"{name}.sqlite" for name in ("sqlite", "postgres")}
    command += CAMPAIGN
    lite = runner.invoke(app, [*command, "--ledger", str(ledgers["sqlite"])])
    result = runner.invoke(
        app, [*command, "--substrate", url, "--ledger", str(ledgers["postgres"])]
    )
    assert lite.exit_code == 0 and result.exit_code == 0, result.output
    [summary] = [line for line in result.output.splitlines() if " runs recorded " in line]
    assert " 0 invalid, " in summary
    doc = (Path(__file__).parents[2] / "docs" / "postgresql.md").read_text()
    assert f"\n{summary.replace(str(ledgers['postgres']), 'L')}\n" in doc
    assert _runs(ledgers["postgres"]) == _runs(ledgers["sqlite"])
