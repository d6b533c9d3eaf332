"""Pruning a shared PostgreSQL server: what nobody uses goes, what a live process uses stays."""

from __future__ import annotations

import secrets
import signal
from contextlib import ExitStack

import psycopg
import pytest

from kaudit.errors import SubstrateError
from kaudit.postgres import Pruned, prune_postgres
from kaudit.postgres._substrate import TRANSLATION_VERSION, PostgresSubstrate
from kaudit.substrate._choice import open_substrate
from tests.pg import databases, holder, token_world, wait_orphaned

pytestmark = pytest.mark.postgres


def template_of(url: str, token: str) -> PostgresSubstrate:
    substrate = open_substrate(url, token_world(token))
    assert isinstance(substrate, PostgresSubstrate)
    return substrate


def by_name(entries: list[Pruned]) -> dict[str, tuple[str, str]]:
    return {e.name: (e.action, e.reason) for e in entries}


def test_prune_drops_what_nobody_uses_and_never_what_a_live_process_does(pg_url: str) -> None:
    """Bug caught: prune dropping a live process's run database or a template it clones
    from (its next run fails), a dry run that drops, or orphans, half-built templates and
    templates of other kaudit code that stay forever."""
    tokens = {
        role: f"{role}{secrets.token_hex(4)}" for role in ("live", "dead", "old", "bare", "kept")
    }
    names = {role: template_of(pg_url, token).template_database for role, token in tokens.items()}
    run = "kaudit_i14_prune/m/t/0"
    with ExitStack() as stack:
        children = {
            role: stack.enter_context(holder(pg_url, run, token)) for role, token in tokens.items()
        }
        for role in ("dead", "old", "bare", "kept"):
            children[role][0].send_signal(signal.SIGKILL)
            children[role][0].wait()
        live_run, dead_run = children["live"][1], children["dead"][1]
        pg = template_of(pg_url, tokens["live"])
        for role in ("dead", "old", "bare", "kept"):
            wait_orphaned(pg, "kaudit_i14_prune", children[role][1])
        half_built = f"kaudit_t_{secrets.token_hex(16)}_b"
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {half_built}")
            conn.execute(
                f"COMMENT ON DATABASE {names['old']} IS "
                """'kaudit {"kind": "template", "translation": "1"}'"""
            )
            conn.execute(f"COMMENT ON DATABASE {names['bare']} IS NULL")  # as kaudit before 14

        preview = by_name(prune_postgres(pg_url, dry_run=True))
        assert preview[live_run][0] == "kept" and preview[dead_run][0] == "would drop"
        assert preview[names["old"]] == (
            "would drop",
            f"built by other kaudit code (translation 1, this is {TRANSLATION_VERSION})",
        )
        assert preview[names["bare"]] == (
            "would drop",
            "neither built nor used by this kaudit version",
        )
        assert preview[names["dead"]] == ("kept", "built or used by this kaudit version")
        assert preview[half_built] == ("would drop", "a build whose builder is gone")
        assert {dead_run, half_built, *names.values()} <= set(databases("kaudit_"))

        # Other sessions' templates on this shared server are kept by naming them.
        others = set(databases("kaudit_t_")) - set(names.values())
        done = by_name(prune_postgres(pg_url, keep=[*others, template_of(pg_url, tokens["kept"])]))
        assert done[live_run][0] == "kept" and done[dead_run][0] == "dropped"
        assert done[names["live"]] == ("kept", "in use by a live process")
        assert done[names["dead"]] == ("dropped", "not used by the kept suites")
        assert done[names["kept"]] == ("kept", "built or used by this kaudit version")
        assert done[names["old"]][0] == done[names["bare"]][0] == done[half_built][0] == "dropped"
        left = set(databases("kaudit_"))
        assert {live_run, names["live"], names["kept"]} <= left
        assert not {dead_run, half_built, names["dead"], names["old"], names["bare"]} & left
    wait_orphaned(pg, "kaudit_i14_prune", live_run)
    others = set(databases("kaudit_t_")) - {names["live"], names["kept"]}
    done = by_name(prune_postgres(pg_url, keep=others))
    assert done[live_run][0] == done[names["live"]][0] == done[names["kept"]][0] == "dropped"


def test_a_template_of_earlier_kaudit_is_recorded_as_current_once_used(pg_url: str) -> None:
    """Bug caught: a template this kaudit still clones from, built before templates
    recorded their version, pruned as stale after every upgrade (a rebuild each time)."""
    token = f"used{secrets.token_hex(4)}"
    name = template_of(pg_url, token).template_database
    pg = template_of(pg_url, token)
    for step in ("build", "use"):
        with holder(pg_url, "kaudit_i14_stamp/m/t/0", token) as (child, run):
            child.send_signal(signal.SIGKILL)
            child.wait()
            wait_orphaned(pg, "kaudit_i14_stamp", run)
        if step == "build":
            with psycopg.connect(pg_url, autocommit=True) as conn:
                conn.execute(f"COMMENT ON DATABASE {name} IS NULL")  # as kaudit before 14
            assert by_name(prune_postgres(pg_url, dry_run=True))[name][0] == "would drop"
    assert by_name(prune_postgres(pg_url, dry_run=True))[name] == (
        "kept",
        "built or used by this kaudit version",
    )
    others = set(databases("kaudit_t_")) - {name}
    assert by_name(prune_postgres(pg_url, keep=others))[name][0] == "dropped"


def test_prune_needs_a_postgresql_url() -> None:
    """Bug caught: `--substrate sqlite` read as a server name (a psycopg traceback)."""
    with pytest.raises(SubstrateError, match="`url` 'sqlite' is not a postgresql:// URL"):
        prune_postgres("sqlite")
