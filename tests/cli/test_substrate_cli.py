"""`kaudit substrate prune`: thin over `prune_postgres`, with the suites to keep."""

from __future__ import annotations

import json
import secrets
import signal

import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.postgres import prune_postgres
from kaudit.postgres._substrate import PostgresSubstrate
from kaudit.substrate._choice import open_substrate
from kaudit.suites import load_suite
from tests.pg import databases, holder, server_url, token_world, wait_orphaned

runner = CliRunner()


@pytest.mark.postgres
def test_keep_suite_keeps_its_templates_and_marks_the_rest_for_dropping() -> None:
    """Bug caught: --keep-suite ignored (every current template kept), or the suite's own
    templates (its worlds, extra rows, distractor variants) not recognised as needed."""
    url = server_url()
    substrates = load_suite("builtin", check=False).substrates_on(url)
    needed = {s.template_database for s in substrates if isinstance(s, PostgresSubstrate)}
    world = substrates[0]
    assert isinstance(world, PostgresSubstrate)
    world.ensure_template()  # at least one of the suite's templates is on the server
    token = f"cli{secrets.token_hex(4)}"
    pg = open_substrate(url, token_world(token))
    assert isinstance(pg, PostgresSubstrate)
    with holder(url, "kaudit_i14_cli/m/t/0", token) as (child, run):
        child.send_signal(signal.SIGKILL)
        child.wait()
        wait_orphaned(pg, "kaudit_i14_cli", run)
    try:
        args = ["substrate", "prune", "--substrate", url, "--keep-suite", "builtin", "--dry-run"]
        result = runner.invoke(app, [*args, "--json"])
        assert result.exit_code == 0, result.output
        entries = {e["name"]: e for e in json.loads(result.output)}
        assert entries[pg.template_database]["action"] == "would drop"
        assert entries[pg.template_database]["reason"] == "not used by the kept suites"
        assert entries[pg.template_database]["world"] == f"token-{token}"
        assert (
            entries[run]["action"] == "would drop"
            and entries[run]["run_id"] == "kaudit_i14_cli/m/t/0"
        )
        assert entries[world.template_database]["action"] == "kept"
        assert world.template_database in needed
        for name in needed & set(entries):
            assert entries[name]["action"] == "kept"
        assert len(needed) > 5  # worlds, and the tasks' extra-row and variant templates
        text = runner.invoke(app, args)
        assert text.exit_code == 0 and "would be dropped (dry run)" in text.output
        assert pg.template_database in databases("kaudit_t_")  # a dry run drops nothing
    finally:  # this test's template goes, whatever happened; others' are kept by name
        others = set(databases("kaudit_t_")) - {pg.template_database}
        prune_postgres(url, keep=others)
    assert pg.template_database not in databases("kaudit_t_")


def test_a_non_postgresql_substrate_is_one_line_and_exit_2() -> None:
    """Bug caught: `--substrate sqlite` ending in a traceback instead of one clear error."""
    result = runner.invoke(app, ["substrate", "prune", "--substrate", "sqlite"])
    assert result.exit_code == 2
    assert "--substrate 'sqlite' is not a postgresql:// URL" in result.output
    assert "Traceback" not in result.output
