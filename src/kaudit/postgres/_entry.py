"""Registers the PostgreSQL substrate without importing psycopg until it is chosen."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from kaudit.errors import SubstrateError
from kaudit.substrate import SUBSTRATES, Blueprint, Substrate, substrate_scheme

Kind = Literal["run", "pool", "template", "build", "role"]
"""What kaudit left on a server is: a run's database, a rollback pool's, a template, a
build, or an agent's login role (`role`, named in `Pruned.name` like a database)."""
Action = Literal["dropped", "would drop", "kept"]


@SUBSTRATES.register("postgresql")
def postgres_substrate(choice: str, blueprint: Blueprint) -> Substrate:
    """A `PostgresSubstrate` at the server `choice` names (`postgresql://user@host:port/db`)."""
    try:
        from kaudit.postgres._substrate import PostgresSubstrate
    except ModuleNotFoundError as exc:
        raise SubstrateError(
            f"the PostgreSQL substrate needs psycopg: pip install 'kaudit[postgres]' ({exc})"
        ) from None
    return PostgresSubstrate(choice, blueprint)


def postgres_world_image(url: str) -> tuple[str, bytes]:
    """The database `url` names, as (database name, SQLite template image with typed tables).

    For worlds whose seeded state is an existing PostgreSQL database rather than SQL.
    """
    try:
        from kaudit.postgres._conn import connect
        from kaudit.postgres._dump import database_image
    except ModuleNotFoundError as exc:
        raise SubstrateError(
            f"reading a PostgreSQL world needs psycopg: pip install 'kaudit[postgres]' ({exc})"
        ) from None
    with connect(url) as conn:
        return conn.info.dbname, database_image(conn)


@dataclass(frozen=True)
class Pruned:
    """What `prune_postgres` did with one kaudit database on the server, and why."""

    name: str
    kind: Kind
    action: Action
    reason: str
    run_id: str | None = None
    """The run that asked for a run or pool database, when its comment says."""
    world: str | None = None
    """The world a template holds, when its comment says."""


def prune_postgres(
    url: str, *, keep: Iterable[Substrate | str] | None = None, dry_run: bool = False
) -> list[Pruned]:
    """Drop what kaudit left on the PostgreSQL server `url` that nobody uses any more.

    Run and pool databases whose owner process is gone (killed campaigns), the agent
    login roles of run databases that are gone, half-built templates whose builder is
    gone, and templates neither built nor used by this
    kaudit version go; with `keep` (substrates, or template database names), so does
    every template not among theirs. A database a live process owns or holds is never
    dropped (a dropped template that was still useful costs a rebuild at its next use).
    One entry per kaudit database, kept ones too.

    Raises:
        SubstrateError: `url` is not a PostgreSQL URL, or the server refused.
    """
    if substrate_scheme(url) != "postgresql":
        raise SubstrateError(f"--substrate {url!r}: prune needs a postgresql:// URL")
    try:
        import psycopg

        from kaudit.postgres._agent_role import prune_agent_roles
        from kaudit.postgres._catalog import prune
        from kaudit.postgres._conn import connect, redacted
        from kaudit.postgres._substrate import TRANSLATION_VERSION, PostgresSubstrate, split_reset
    except ModuleNotFoundError as exc:
        raise SubstrateError(
            f"the PostgreSQL substrate needs psycopg: pip install 'kaudit[postgres]' ({exc})"
        ) from None
    server, _ = split_reset(url)
    names = None
    if keep is not None:
        names = {k if isinstance(k, str) else _template_of(k, PostgresSubstrate) for k in keep}
    with connect(server) as admin:
        try:
            kept = None if names is None else {name for name in names if name is not None}
            done = prune(admin, translation=TRANSLATION_VERSION, keep=kept, dry_run=dry_run)
            gone = "its run's database is gone"
            action: Action = "would drop" if dry_run else "dropped"
            roles = prune_agent_roles(admin, dry_run=dry_run)
            return [*done, *(Pruned(name, "role", action, gone) for name in roles)]
        except psycopg.Error as exc:
            raise SubstrateError(f"PostgreSQL at {redacted(server)}: {exc}") from None


def _template_of(substrate: Substrate, postgres: type[Any]) -> str | None:
    """The template database a PostgreSQL substrate clones from (None for other kinds)."""
    return substrate.template_database if isinstance(substrate, postgres) else None
