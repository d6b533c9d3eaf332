"""The kaudit databases on a server: what each is, who owns it, and whether it may go.

Names say what a database is: `kaudit_t_<recipe>` a template (`_b` while it is being
built), `kaudit_r_<owner>_<run>` a run's or a pool's database, whose owner key (see
`_owner`) is in the name itself, so even a database created a moment ago whose
comment is not yet written is known to be owned. Comments carry the rest as JSON after
`kaudit `: the run id, host and pid for a run database, the world and digest for a
template. Run databases named by earlier kaudit versions (`kaudit_r_<hash>`, comment
`kaudit run <run id>`) have no owner; they count as live only while a session is
connected to them.

A database may be dropped only when nobody can be using it: a run or pool database
whose owner's lock is free and that no session is connected to; a half-built template
whose builder's lock is free; a template no live process holds (`prune` takes the
template's lock exclusively for the moment of the drop).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from kaudit.postgres._conn import drop_database
from kaudit.postgres._owner import OWNER_SPACE, TEMPLATE_SPACE, OwnerTag
from kaudit.postgres._pruned import Action, Kind, Pruned

RUN_PREFIX = "kaudit_r_"
TEMPLATE_PREFIX = "kaudit_t_"
COMMENT_PREFIX = "kaudit "
LEGACY_RUN_COMMENT = "kaudit run "
"""How kaudit before owner keys tagged run databases: this prefix, then the run id."""

_OWNED = re.compile(r"kaudit_r_([0-9a-f]{8})_[0-9a-f]{32}")
_LEGACY = re.compile(r"kaudit_r_[0-9a-f]{32}")
_TEMPLATE = re.compile(r"kaudit_t_[0-9a-f]{32}")
_BUILD = re.compile(r"(kaudit_t_[0-9a-f]{32})_b")


def run_database(run_id: str, owner: OwnerTag) -> str:
    """The database of `run_id` made by `owner`.

    A restarted run in the same process finds its leftover under the same name; another
    process never collides with it.
    """
    digest = hashlib.sha256(f"{owner.key}\0{run_id}".encode()).hexdigest()[:32]
    return f"{RUN_PREFIX}{owner.hex}_{digest}"


def tag_comment(fields: dict[str, Any]) -> str:
    """A database comment kaudit can read back."""
    return COMMENT_PREFIX + json.dumps(fields, sort_keys=True, separators=(",", ":"))


def run_comment(kind: Kind, run_id: str, owner: OwnerTag) -> str:
    """The comment of a run or pool database: which run asked for it, and its owner."""
    return tag_comment(
        {"kind": kind, "run": run_id, "owner": owner.key, "host": owner.host, "pid": owner.pid}
    )


@dataclass(frozen=True)
class ServerDatabase:
    """One kaudit database on the server as its name, comment and sessions describe it."""

    name: str
    kind: Kind
    run_id: str | None
    """The run that asked for it (run and pool databases whose comment is written)."""
    owner: int | None
    """The owner key; None for templates and for run databases of earlier kaudit versions."""
    host: str | None
    pid: int | None
    facts: dict[str, Any]
    """The rest of the comment (a template's world, digest and translation version)."""
    connected: bool
    """Whether any session is connected to it now."""
    owner_live: bool
    """Whether its owner's lock is held now."""

    @property
    def orphaned(self) -> bool:
        """A run or pool database nobody can be using: its owner is gone, nobody is connected."""
        return self.kind in ("run", "pool") and not self.owner_live and not self.connected

    def of_campaign(self, campaign: str) -> bool:
        """Whether a run of `campaign` asked for it."""
        return self.run_id is not None and self.run_id.startswith(campaign + "/")


_LIST = """
SELECT d.datname, coalesce(shobj_description(d.oid, 'pg_database'), ''),
       EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datid = d.oid)
FROM pg_database d
WHERE starts_with(d.datname, %s) OR starts_with(d.datname, %s)
ORDER BY d.datname
"""
_LIVE_OWNERS = """
SELECT objid::bigint FROM pg_locks
WHERE locktype = 'advisory' AND classid = %s::oid AND objsubid = 2 AND granted
"""


def server_databases(admin: psycopg.Connection[Any]) -> list[ServerDatabase]:
    """Every kaudit database on the server, with what is known of its owner."""
    rows = admin.execute(_LIST, (RUN_PREFIX, TEMPLATE_PREFIX)).fetchall()
    live = {key for (key,) in admin.execute(_LIVE_OWNERS, (OWNER_SPACE,)).fetchall()}
    found = []
    for name, comment, connected in rows:
        kind, owner = _kind_of(name)
        if kind is None:
            continue  # a user's own database that merely starts like ours
        facts = _parse(comment)
        kind = "pool" if kind == "run" and facts.get("kind") == "pool" else kind
        found.append(
            ServerDatabase(
                name=name,
                kind=kind,
                run_id=facts.pop("run", None),
                owner=owner,
                host=facts.pop("host", None),
                pid=facts.pop("pid", None),
                facts={k: v for k, v in facts.items() if k not in ("kind", "owner")},
                connected=bool(connected),
                owner_live=owner is not None and owner in live,
            )
        )
    return found


def _kind_of(name: str) -> tuple[Kind | None, int | None]:
    owned = _OWNED.fullmatch(name)
    if owned is not None:
        return "run", int(owned.group(1), 16)
    if _LEGACY.fullmatch(name):
        return "run", None
    if _TEMPLATE.fullmatch(name):
        return "template", None
    if _BUILD.fullmatch(name):
        return "build", None
    return None, None


def _parse(comment: str) -> dict[str, Any]:
    if comment.startswith(LEGACY_RUN_COMMENT):
        return {"kind": "run", "run": comment[len(LEGACY_RUN_COMMENT) :]}
    if comment.startswith(COMMENT_PREFIX):
        try:
            fields = json.loads(comment[len(COMMENT_PREFIX) :])
        except ValueError:
            return {}
        return fields if isinstance(fields, dict) else {}
    return {}


def prune(
    admin: psycopg.Connection[Any],
    *,
    translation: str,
    keep: Collection[str] | None,
    dry_run: bool,
) -> list[Pruned]:
    """Drop what nobody uses; one entry per kaudit database on the server.

    Run and pool databases go when orphaned, half-built templates when their builder is
    gone. A template goes when no live process holds it and it is stale: neither built
    nor used by kaudit of this `translation` version (each records itself in the
    template's comment), or, when `keep` names the templates to keep, not among them.
    """
    done = []
    for database in server_databases(admin):
        if database.kind in ("run", "pool"):
            done.append(_prune_run(admin, database, dry_run))
        elif database.kind == "build":
            done.append(_prune_build(admin, database, dry_run))
        else:
            done.append(_prune_template(admin, database, translation, keep, dry_run))
    return done


def _entry(database: ServerDatabase, action: Action, reason: str) -> Pruned:
    world = database.facts.get("world")
    return Pruned(
        database.name,
        database.kind,
        action,
        reason,
        database.run_id,
        world if isinstance(world, str) else None,
    )


def _prune_run(admin: psycopg.Connection[Any], database: ServerDatabase, dry: bool) -> Pruned:
    where = f" ({database.host}, pid {database.pid})" if database.host else ""
    if database.owner_live:
        return _entry(database, "kept", f"its owner{where} is alive")
    if database.connected:
        return _entry(database, "kept", "a session is connected to it")
    if not dry:
        drop_database(admin, database.name)
    owner = "its owner" + where if database.owner is not None else "made by earlier kaudit,"
    return _entry(database, "would drop" if dry else "dropped", f"{owner} gone")


def _prune_build(admin: psycopg.Connection[Any], database: ServerDatabase, dry: bool) -> Pruned:
    final = database.name.removesuffix("_b")
    with _locked(admin, sql.SQL("hashtext({})").format(sql.Literal(final)), None) as free:
        if not free:
            return _entry(database, "kept", "being built")
        if not dry:
            drop_database(admin, database.name)
    return _entry(database, "would drop" if dry else "dropped", "a build whose builder is gone")


def _prune_template(
    admin: psycopg.Connection[Any],
    database: ServerDatabase,
    translation: str,
    keep: Collection[str] | None,
    dry: bool,
) -> Pruned:
    built_by = database.facts.get("translation")
    if built_by is None:
        reason = "neither built nor used by this kaudit version"
    elif built_by != translation:
        reason = f"built by other kaudit code (translation {built_by}, this is {translation})"
    elif keep is not None and database.name not in keep:
        reason = "not used by the kept suites"
    else:
        return _entry(database, "kept", "built or used by this kaudit version")
    key = sql.SQL("hashtext({})").format(sql.Literal(database.name))
    with (
        _locked(admin, key, TEMPLATE_SPACE) as unused,  # no live process holds it
        _locked(admin, key, None) as unbuilt,  # nobody (even older kaudit) is building it
    ):
        if not (unused and unbuilt):
            return _entry(database, "kept", "in use by a live process")
        if not dry:
            name = sql.Identifier(database.name)
            admin.execute(sql.SQL("ALTER DATABASE {} IS_TEMPLATE false").format(name))
            drop_database(admin, database.name)
    return _entry(database, "would drop" if dry else "dropped", reason)


class _locked:
    """Try an exclusive session advisory lock for a moment; `as` says whether it was free."""

    def __init__(
        self, admin: psycopg.Connection[Any], key: sql.Composable, space: int | None
    ) -> None:
        self._admin = admin
        prefix = sql.SQL("") if space is None else sql.SQL("{}, ").format(sql.Literal(space))
        self._args = sql.SQL("{}{}").format(prefix, key)
        self._held = False

    def __enter__(self) -> bool:
        query = sql.SQL("SELECT pg_try_advisory_lock({})").format(self._args)
        row = self._admin.execute(query).fetchone()
        self._held = bool(row and row[0])
        return self._held

    def __exit__(self, *exc: object) -> None:
        if self._held:
            self._admin.execute(sql.SQL("SELECT pg_advisory_unlock({})").format(self._args))
