"""The PostgreSQL substrate: a template database per world, a cloned database per run.

The world's SQLite template (the canonical seeded state) is built once into a
template database named by its digest (`kaudit_t_<digest>`), checked row for row
against the SQLite image, and only then published under that name; a crashed build
leaves a `_b` database the next build drops. Each run gets its own database
(`CREATE DATABASE kaudit_r_<owner>_<hash of run id> TEMPLATE ...`), dumped before
cleanup and dropped. The owner is this process (see `_owner`), so campaigns of the
same name run from other ledgers, processes or machines never touch each other's
databases. A killed process leaves its run databases behind; `reclaim(campaign)` drops
those of the campaign whose owner is gone, and `prune` every such one on the server.
"""

from __future__ import annotations

import hashlib
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote as quote_url
from urllib.parse import unquote, urlsplit, urlunsplit

import psycopg
from psycopg import sql

from kaudit.errors import SeedDriftError, SubstrateError
from kaudit.postgres._capture import (
    Changes,
    capture_statements,
    catalog_fingerprint,
    read_changes,
)
from kaudit.postgres._catalog import (
    COMMENT_PREFIX,
    TEMPLATE_PREFIX,
    ServerDatabase,
    run_comment,
    run_database,
    server_databases,
    tag_comment,
)
from kaudit.postgres._conn import connect, database_exists, drop_database, redacted
from kaudit.postgres._db import PostgresDb
from kaudit.postgres._dump import CatalogTable, catalog_tables, dump_image, first_difference
from kaudit.postgres._owner import owner_for
from kaudit.postgres._pool import (
    DatabasePool,
    PooledSandbox,
    Prepared,
    PreparedSandbox,
    pool_serial,
)
from kaudit.postgres._pruned import Kind
from kaudit.postgres._state import TemplateImages
from kaudit.postgres._translate import COMPAT_FUNCTIONS, PgTable, translate
from kaudit.substrate import Blueprint, Dump, HandedDatabase, Schema, StateDump, quote
from kaudit.tools import Tool

_READY: dict[tuple[str, str], int] = {}
"""(server URL, template name) this process has built or checked -> under which owner claim.

A template checked under an earlier claim is checked again: while the lost claim was being
taken again, nothing kept a prune from dropping it."""
_READY_LOCK = threading.Lock()
_POOL_LOCK = threading.Lock()


def _new_locks() -> None:
    global _READY_LOCK, _POOL_LOCK
    _READY_LOCK, _POOL_LOCK = threading.Lock(), threading.Lock()  # a thread may hold one at fork


os.register_at_fork(after_in_child=_new_locks)


TRANSLATION_VERSION = "5"
"""Bump when what a template database holds for the same image changes (DDL translation,
compatibility functions, change capture), so templates built by older code are not reused."""


def template_database(digest: str, source: str | None = None) -> str:
    """The template database name of a seeded state: its image digest and how it is built."""
    recipe = f"{TRANSLATION_VERSION}\0{digest}\0{source or ''}"
    return TEMPLATE_PREFIX + hashlib.sha256(recipe.encode()).hexdigest()[:32]


RESETS = ("clone", "rollback")
DUMPS = ("changes", "full")
AHEAD = 4
"""Clones a clone-mode substrate keeps ready (a local campaign runs a few at a time)."""


def split_reset(choice: str) -> tuple[str, str]:
    """(server URL, reset) from `postgresql://...[?reset=clone|rollback]` (default clone)."""
    url, options = split_choice(choice)
    return url, options["reset"]


def split_choice(choice: str) -> tuple[str, dict[str, str]]:
    """(server URL, kaudit's options) from `postgresql://...?reset=...&dump=...&ahead=...`.

    `reset`: `clone` (default) or `rollback`. `dump`: `changes` (default: read the rows
    the change log names) or `full` (every table, every run). `ahead`: how many clones
    to keep ready in clone mode (default 4; 0 makes each run clone its own).

    The other parameters are passed on as written: libpq reads `%20` as a space but `+`
    as a plus, unlike a form decoder, so decoding and re-encoding them would turn an
    `options=-c%20statement_timeout%3D5000` into an `options` the server refuses. The
    rest of the URL is kept as text too: `urlunsplit` writes a hostless
    `postgresql:///db` (a Unix socket, `PGHOST`, a service) as `postgresql:/db`, which
    libpq does not read as a URL.
    """
    base, _, query = choice.partition("?")
    pairs = [pair for pair in query.split("&") if pair]
    ours = {"reset": "clone", "dump": "changes", "ahead": str(AHEAD)}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name in ours:
            ours[name] = unquote(value)
    if ours["reset"] not in RESETS:
        raise SubstrateError(f"`substrate` has reset={ours['reset']!r}; use {list(RESETS)}")
    if ours["dump"] not in DUMPS:
        raise SubstrateError(f"`substrate` has dump={ours['dump']!r}; use {list(DUMPS)}")
    if not ours["ahead"].isdigit() or int(ours["ahead"]) > 64:
        raise SubstrateError(f"`substrate` has ahead={ours['ahead']!r}; use 0 to 64")
    rest = "&".join(p for p in pairs if p.partition("=")[0] not in ours)
    return (f"{base}?{rest}" if rest else base), ours


def _load(conn: psycopg.Connection[Any], image: StateDump, tables: list[PgTable]) -> None:
    """Create the tables, copy the template's rows in, then add keys and foreign keys."""
    source = image.open()
    try:
        for statement in COMPAT_FUNCTIONS:
            conn.execute(statement.encode())
        for table in tables:
            conn.execute(table.create.encode())
            columns = ", ".join(quote(c) for c in table.columns)
            rows = source.execute(f"SELECT {columns} FROM {quote(table.name)}").fetchall()
            with conn.cursor().copy(
                f"COPY {quote(table.name)} ({columns}) FROM STDIN".encode()
            ) as copy:
                for row in rows:
                    copy.write_row(row)
        for table in tables:
            for statement in table.constraints:
                conn.execute(statement.encode())
    except psycopg.Error as exc:
        raise SubstrateError(f"template cannot be loaded into PostgreSQL: {exc}") from None
    finally:
        source.close()


def database_url(server: str, database: str) -> str:
    """`server` (a `postgresql://` URL) pointing at `database` instead of its own."""
    parts = urlsplit(server)
    if parts.scheme not in ("postgresql", "postgres"):
        raise SubstrateError(f"{redacted(server)}: a run's database is handed over as a URL")
    return urlunsplit(parts._replace(path="/" + quote_url(database, safe="")))


class PostgresSandbox(PreparedSandbox):
    """One run's own database on the server, cloned from the world's template database."""

    _substrate: PostgresSubstrate  # all of it: closing also reaches the substrate's pool

    def __init__(self, run_id: str, substrate: PostgresSubstrate, prepared: Prepared) -> None:
        super().__init__(run_id, substrate, prepared, PostgresDb(prepared.conn))

    def dump(self) -> Dump:
        """The state now: the rows the change log names over the template, or every table.

        An open transaction is an error, not a silent rollback.
        """
        if self._conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            raise SubstrateError(f"run {self.run_id}: dump requested inside a transaction")
        state, self.dumped_by = self._substrate.final_state(
            self._conn, self.db, self._prepared.fingerprint, self.run_id
        )
        return state

    def hand_over(self, directory: Path) -> HandedDatabase:
        """The run's own database, as a URL on the substrate's server (`directory` unused).

        The agent's code connects as the substrate's user unless a door in front of the
        database (its own login role, a wire proxy) hands out another URL instead.
        """
        return HandedDatabase(None, database_url(self.server, self.database))

    def take_back(self) -> None:
        """Nothing to take back: the dump reads the run's database itself."""

    def close(self) -> None:
        """Close the connection; the run's database is dropped off the run's path."""
        self._conn.close()
        self._substrate.drop_later(self.database)
        self._substrate.pool().done()


class PostgresSubstrate:
    """A world on a PostgreSQL server: seed = `CREATE DATABASE ... TEMPLATE` (tens of ms).

    Holds no connection between calls, so it pickles to another process (Ray).
    """

    def __init__(self, url: str, blueprint: Blueprint) -> None:
        self.url, options = split_choice(url)
        self.reset, self.dump_mode = options["reset"], options["dump"]
        self.ahead = int(options["ahead"])
        self.choice = url
        self.name = blueprint.name
        self.template = StateDump.of(blueprint.image)
        self.tools: dict[str, Tool] = dict(blueprint.tools)
        self.volatile: dict[str, tuple[str, ...]] = dict(blueprint.volatile)
        self.schema: Schema = self.template.schema()
        self.source_database = blueprint.source_database
        self.ownership = blueprint.ownership
        self.template_database = template_database(self.template.digest, self.source_database)
        self._pool: DatabasePool | None = None
        self._images: TemplateImages | None = None
        self._catalogs: dict[str, dict[str, CatalogTable] | None] = {}
        """Per catalog fingerprint: the tables as the dump reads them, None if they do not
        match the template's (then every table is read)."""
        self._campaign: str | None = None
        """The campaign last reclaimed: clones made ahead are tagged with it."""

    def __getstate__(self) -> dict[str, Any]:
        private = ("_pool", "_images")
        return {k: v for k, v in self.__dict__.items() if k not in private} | {
            "_pool": None,
            "_images": None,
        }

    @property
    def template_digest(self) -> str:
        """sha256 of the SQLite template image the template database was built from."""
        return self.template.digest

    @contextmanager
    def admin(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection to the URL's own database, closed on exit.

        One per operation rather than one kept open: opening costs milliseconds next to
        a database clone, and nothing is left for a killed process to leak.
        """
        conn = connect(self.url)
        try:
            yield conn
        except psycopg.Error as exc:
            raise SubstrateError(f"PostgreSQL at {redacted(self.url)}: {exc}") from None
        finally:
            conn.close()

    def ensure_template(self) -> str:
        """The template database's name, building and checking it first if it does not exist.

        A server-wide advisory lock on the name makes concurrent first builds (other
        processes, other machines) wait for one builder instead of racing. The process
        marks the template as in use first, for as long as it lives, so a prune that
        starts later never drops it.
        """
        key = (self.url, self.template_database)
        claim = owner_for(self.url).hold_template(self.template_database)
        with _READY_LOCK:
            if _READY.get(key) == claim:
                return self.template_database
        with self.admin() as admin:
            admin.execute("SELECT pg_advisory_lock(hashtext(%s))", (self.template_database,))
            try:
                if not database_exists(admin, self.template_database):
                    self._build(admin)
                else:
                    self._stamp(admin, self.template_database, lazy=True)
            finally:
                admin.execute("SELECT pg_advisory_unlock(hashtext(%s))", (self.template_database,))
        with _READY_LOCK:
            _READY[key] = claim
        return self.template_database

    def _build(self, admin: psycopg.Connection[Any]) -> None:
        building = self.template_database + "_b"
        drop_database(admin, building)
        if self.source_database is not None:
            # The world *is* this database: clone it (no session may be connected to it).
            admin.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                    sql.Identifier(building), sql.Identifier(self.source_database)
                )
            )
        else:
            image = self.template.open()
            try:
                tables = translate(image)
            finally:
                image.close()
            admin.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8'").format(
                    sql.Identifier(building)
                )
            )
            with connect(self.url, building) as conn:
                _load(conn, self.template, tables)
        with connect(self.url, building) as conn:
            keys = {name: table.primary_key for name, table in self.schema.tables.items()}
            try:
                for statement in capture_statements(keys):
                    conn.execute(statement.encode())
                # Frozen and analyzed once here, every clone starts with hint bits set and
                # planner statistics: the dump's catalog reads take a tenth of the time.
                conn.execute("VACUUM (FREEZE, ANALYZE)")
            except psycopg.Error as exc:
                drop_database(admin, building)
                raise SubstrateError(
                    f"{self.name}: change capture cannot be installed: {exc}"
                ) from None
            difference = first_difference(self.template, dump_image(conn, self.schema))
        if difference is not None:
            drop_database(admin, building)
            raise SeedDriftError(
                f"{self.name}: the PostgreSQL template does not hold the world's seed: {difference}"
            )
        self._stamp(admin, building)
        admin.execute(
            sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                sql.Identifier(building), sql.Identifier(self.template_database)
            )
        )
        admin.execute(
            sql.SQL("ALTER DATABASE {} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false").format(
                sql.Identifier(self.template_database)
            )
        )

    def _stamp(self, admin: psycopg.Connection[Any], name: str, lazy: bool = False) -> None:
        """Record in the template's comment the world and the code that builds it.

        A template built by an earlier kaudit that this one uses as it is gets the
        record on first use, so `prune` knows it is still current.
        """
        if lazy:  # only when not yet recorded
            row = admin.execute(
                "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
                (name,),
            ).fetchone()
            if row is not None and (row[0] or "").startswith(COMMENT_PREFIX):
                return
        facts: dict[str, str | None] = {"kind": "template", "world": self.name}
        facts |= {"digest": self.template.digest, "translation": TRANSLATION_VERSION}
        facts["source"] = self.source_database
        admin.execute(
            sql.SQL("COMMENT ON DATABASE {} IS {}").format(
                sql.Identifier(name), sql.Literal(tag_comment(facts))
            )
        )

    def seed(self, run_id: str) -> PostgresSandbox | PooledSandbox:
        """A fresh database for `run_id`.

        A clone of the template made ahead by the pool's worker, or one cloned now when
        none is ready (a leftover of the same run in this process is dropped first);
        with `reset=rollback` a pooled one whose previous run was rolled back.
        """
        pool = self.pool()
        taken = pool.take()
        try:
            while taken is not None:
                try:
                    return self._sandbox(run_id, taken, pool)
                except SubstrateError:
                    # The server ended the idle session (idle_session_timeout, a restart,
                    # pg_terminate_backend): drop its database rather than leak it.
                    taken.conn.close()
                    self.drop_database(taken.database)
                    pool.done()
                    taken = pool.take()
            serial = pool_serial() if self.reset == "rollback" else ""
            fresh = self._prepare(run_id, serial)
            try:
                return self._sandbox(run_id, fresh, pool)
            except SubstrateError:
                fresh.conn.close()
                self.drop_database(fresh.database)
                raise
        except BaseException:
            pool.done()
            raise

    def _sandbox(
        self, run_id: str, prepared: Prepared, pool: DatabasePool
    ) -> PostgresSandbox | PooledSandbox:
        if self.reset == "rollback":
            return PooledSandbox(run_id, self, pool, prepared)
        return PostgresSandbox(run_id, self, prepared)

    def pool(self) -> DatabasePool:
        """This process's pool of ready databases (a forked child makes its own)."""
        with _POOL_LOCK:  # runs seed in worker threads: one pool per substrate, not one each
            if self._pool is None or not self._pool.mine:  # a forked child's is the parent's
                ahead = 1 if self.reset == "rollback" else self.ahead
                self._pool = DatabasePool(self, _maker(self), ahead)
            return self._pool

    def _prepare(self, run_id: str, serial: str) -> Prepared:
        """A new clone with its open connection and its catalog's fingerprint.

        Taken while the database is still the template, so the dump can tell whether
        DDL ran since; the catalog is read once per fingerprint, for the dump's types.
        """
        database = self._clone(run_id, "pool" if serial else "run", serial)
        conn: psycopg.Connection[Any] | None = None
        try:
            conn = connect(self.url, database)
            fingerprint: str | None = None
            if self.dump_mode == "changes":
                fingerprint = catalog_fingerprint(conn)
                if fingerprint not in self._catalogs:
                    self._catalogs[fingerprint] = self._matching_catalog(conn)
                if self._catalogs[fingerprint] is None:
                    fingerprint = None
            return Prepared(database, conn, fingerprint)
        except (SubstrateError, psycopg.Error) as exc:
            if conn is not None:
                conn.close()
            self.drop_database(database)
            if isinstance(exc, SubstrateError):
                raise
            raise SubstrateError(f"run {run_id}: {database}: {exc}") from None

    def _matching_catalog(self, conn: psycopg.Connection[Any]) -> dict[str, CatalogTable] | None:
        """The catalog's tables if they are the template's, column for column, else None."""
        catalog = catalog_tables(conn)
        for name, table in self.schema.tables.items():
            found = catalog.get(name)
            if found is None or (found.columns, found.primary_key) != (
                table.columns,
                table.primary_key,
            ):
                return None
        return catalog if set(catalog) == set(self.schema.tables) else None

    def final_state(
        self,
        conn: psycopg.Connection[Any],
        db: PostgresDb,
        fingerprint: str | None,
        run_id: str,
    ) -> tuple[Dump, str]:
        """The run's final state, and how it was read: 'changes', or why every table.

        The change log's rows over the template when the catalog is still the one the
        database was made with; every table otherwise, or when `dump=full` was asked.
        """
        if db.broken is not None:
            raise SubstrateError(f"run {run_id}: {db.broken}")
        try:
            how = "dump=full was asked" if self.dump_mode == "full" else "no change capture"
            if fingerprint is not None:
                found = read_changes(conn, fingerprint, self._catalogs[fingerprint] or {})
                if isinstance(found, Changes):
                    return self.images().final_state(run_id, self.schema, found), "changes"
                how = found
            return StateDump.of(dump_image(conn, self.schema)), how
        except psycopg.Error as exc:
            raise SubstrateError(f"run {run_id}: dump failed: {exc}") from None

    def images(self) -> TemplateImages:
        """The SQLite connections over the template the change-log dump writes into."""
        with _POOL_LOCK:
            if self._images is None:
                self._images = TemplateImages(self.template)
            return self._images

    def _clone(self, run_id: str, kind: Kind, serial: str = "") -> str:
        """A new database cloned from the template, named and tagged for this process's run.

        `serial` tells apart the pooled databases a run id may clone in one process.
        """
        template = self.ensure_template()
        owner = owner_for(self.url).current()
        database = run_database(run_id + serial, owner)
        with self.admin() as admin:
            drop_database(admin, database)
            admin.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                    sql.Identifier(database), sql.Identifier(template)
                )
            )
            admin.execute(
                sql.SQL("COMMENT ON DATABASE {} IS {}").format(
                    sql.Identifier(database), sql.Literal(run_comment(kind, run_id, owner))
                )
            )
        return database

    def drop_later(self, name: str) -> None:
        """Drop a run database on the pool's worker, off the run's path."""
        self.pool().later(lambda: self.drop_database(name))

    def drop_database(self, name: str) -> None:
        """Drop one run database (connections still open to it are terminated)."""
        with self.admin() as admin:
            drop_database(admin, name)

    def run_databases(self, campaign: str) -> list[ServerDatabase]:
        """The run and pool databases of `campaign` on the server, whoever owns them."""
        with self.admin() as admin:
            found = server_databases(admin)
        return [d for d in found if d.kind in ("run", "pool") and d.of_campaign(campaign)]

    def reclaim(self, campaign: str) -> int:
        """Drop the run databases of `campaign` whose owner is gone; returns how many.

        Those of live owners stay, whichever ledger or machine they run from: another
        invocation of a campaign of the same name may be running right now.
        """
        self._campaign = campaign
        orphans = [d.name for d in self.run_databases(campaign) if d.orphaned]
        with self.admin() as admin:
            for name in orphans:
                drop_database(admin, name)
        return len(orphans)

    def describe(self) -> dict[str, Any]:
        """The substrate for the campaign manifest: kind, server (password redacted), reset."""
        return {"server": redacted(self.url), "reset": self.reset}

    def derive(self, image: bytes) -> PostgresSubstrate:
        """The same server, tools and volatile columns over another template image.

        A world cloned from a source database cannot take extra rows: its template is
        that database, not the image.
        """
        if self.source_database is not None and image != self.template.image:
            raise SubstrateError(
                f"world {self.name} is cloned from database {self.source_database}; "
                "extra rows and distractor variants need a world seeded from SQL"
            )
        blueprint = Blueprint(
            self.name, image, self.tools, self.volatile, self.source_database, self.ownership
        )
        return PostgresSubstrate(self.choice, blueprint)


def _maker(substrate: PostgresSubstrate) -> Callable[[], Prepared | None]:
    """What the pool's worker calls to make a database ahead; holds the substrate weakly.

    A clone made ahead belongs to no run yet: it is tagged with the campaign last
    reclaimed (so that campaign's next reclaim finds it if this process is killed).
    """
    ref = weakref.ref(substrate)

    def make() -> Prepared | None:
        found = ref()
        if found is None:
            return None
        run_id = f"{found._campaign or 'kaudit'}/ahead"
        return found._prepare(run_id, pool_serial())

    return make
