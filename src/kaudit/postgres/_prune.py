"""Dropping what kaudit left on a PostgreSQL server: the `prune_postgres` API.

psycopg is imported when it runs; `_catalog` decides what goes, from the server's
catalog and the owner tags in each database's comment.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kaudit.errors import SubstrateError
from kaudit.postgres._pruned import Action, Pruned
from kaudit.substrate import Substrate
from kaudit.substrate._choice import substrate_scheme


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
        raise SubstrateError(f"`url` {url!r} is not a postgresql:// URL, which prune needs")
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
