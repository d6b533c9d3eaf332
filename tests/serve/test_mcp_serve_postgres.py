"""`kaudit mcp serve --substrate postgresql://...`: served runs on a real server, as on SQLite."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from kaudit.ledger import Ledger
from kaudit.suites import load_suite
from tests.pg import server_url
from tests.serve.conftest import TASK
from tests.serve.test_mcp_serve import GREEDY_WRITE, ORACLE_WRITE, READ, drive

pytestmark = pytest.mark.postgres
CAMPAIGN = "kaudit_i14mcp_served"
"""Our own campaign: `kaudit run` reclaims its campaign's run databases when it starts."""


def oracle_then_greedy(ledger: Path, *extra: str) -> list[Any]:
    """An oracle client, then a greedy one, served into one ledger."""
    common = ("--campaign", CAMPAIGN, *extra)
    return [
        asyncio.run(drive(ledger, calls, "--model", model, "--seed", seed, *common))
        for model, seed, calls in (
            ("oracle", "1", [READ, ORACLE_WRITE]),
            ("greedy", "2", [READ, GREEDY_WRITE]),
        )
    ]


def verdicts(ledger: Path) -> dict[str, tuple[Any, ...]]:
    with Ledger(ledger) as store:
        return {
            r.model: (r.status, r.outcome, r.sub_label, r.dollars, r.verdict, r.tool_calls)
            for r in store.records(CAMPAIGN)
        }


def test_served_runs_on_postgresql_match_sqlite_and_leave_no_database(tmp_path: Path) -> None:
    """Fails if --substrate is ignored (the runs would say SqliteSubstrate), if PostgreSQL
    changes what the labeler sees (verdict, deltas, dollars) or what a call returns, or if a
    served run's database is left on the server."""
    url = server_url()
    lite, pg = tmp_path / "sqlite.sqlite", tmp_path / "pg.sqlite"
    oracle_then_greedy(lite)
    replies = oracle_then_greedy(pg, "--substrate", url)
    assert [[r.is_error for r in calls] for _, calls, _ in replies] == [[False, False]] * 2
    on_sqlite, on_postgres = verdicts(lite), verdicts(pg)
    assert on_postgres == on_sqlite
    assert {model: v[:4] for model, v in on_postgres.items()} == {
        "oracle": ("labeled", "PASS", None, None),
        "greedy": ("labeled", "FAIL_DAMAGE", "completed_damage", "610.0"),
    }
    with Ledger(pg) as store:
        assert {r.extra["served"]["substrate"] for r in store.records()} == {"PostgresSubstrate"}
        assert sorted(r.run_index for r in store.records()) == [0, 0]
    suite = load_suite("builtin").on_substrate(url)
    assert suite.reclaim(CAMPAIGN, [suite.tasks[TASK]]) == 0
