"""Per-run cost of the PostgreSQL substrate beside SQLite, on the built-in enterprise world.

For each run (one tool write): seed, dump (catalog + binary COPY into a SQLite image) and
cleanup, for the default `clone` mode (`CREATE DATABASE ... TEMPLATE`, drop after the
dump), the `?reset=rollback` mode (a pooled database, one transaction rolled back after
the dump; its first, cloning run is left out) and SQLite (deserialize / serialize). Two
raw resets are measured beside them on one kept database: truncate-and-reload of every
table, and a bare transaction rollback. Medians in ms.

    python bench/pg_seed.py [--runs 10] [--url postgresql://...] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from psycopg import sql

from kaudit.postgres._conn import connect
from kaudit.postgres._substrate import PostgresSubstrate
from kaudit.substrate import quote
from kaudit.worlds._world import get_world, world_substrate

URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def _ms(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return (time.perf_counter() - start) * 1000.0, value


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def measure_postgres(substrate: PostgresSubstrate, runs: int) -> dict[str, float]:
    seed, dump, cleanup = [], [], []
    for i in range(runs + 1):
        ms, sandbox = _ms(lambda i=i: substrate.seed(f"kaudit_bench/pg/seed/{i}"))
        sandbox.db.execute("UPDATE incidents SET status = 'closed' WHERE incident_id = 'INC_001'")
        dump_ms = _ms(sandbox.dump)[0]
        cleanup_ms = _ms(sandbox.close)[0]
        if i:  # the first run of a pool clones; count the steady state
            seed.append(ms)
            dump.append(dump_ms)
            cleanup.append(cleanup_ms)
    return {"seed": _median(seed), "dump": _median(dump), "cleanup": _median(cleanup)}


def measure_sqlite(runs: int) -> dict[str, float]:
    substrate = world_substrate(get_world("enterprise"))
    seed, dump = [], []
    for i in range(runs):
        ms, sandbox = _ms(lambda i=i: substrate.seed(f"bench/{i}"))
        sandbox.db.execute("UPDATE incidents SET status = 'closed' WHERE incident_id = 'INC_001'")
        seed.append(ms)
        dump.append(_ms(sandbox.dump)[0])
        sandbox.close()
    return {"seed": _median(seed), "dump": _median(dump), "cleanup": 0.0}


def measure_resets(substrate: PostgresSubstrate, runs: int) -> dict[str, float]:
    """Truncate-and-reload and rollback, each on one kept run database."""
    sandbox = substrate.seed("kaudit_bench/pg/reset/0")
    image = substrate.template.open()
    tables = list(substrate.schema.tables.values())
    rows = {t.name: image.execute(f"SELECT * FROM {quote(t.name)}").fetchall() for t in tables}
    image.close()
    conn = connect(substrate.url, sandbox.database)
    names = sql.SQL(", ").join(sql.Identifier(t.name) for t in tables)

    def reload() -> None:
        with conn.transaction():
            conn.execute(sql.SQL("TRUNCATE {} CASCADE").format(names))
            conn.execute("SET CONSTRAINTS ALL DEFERRED")
            conn.execute("SET LOCAL session_replication_role = replica")
            for table in tables:
                copy_sql = f"COPY {quote(table.name)} FROM STDIN".encode()
                with conn.cursor().copy(copy_sql) as copy:
                    for row in rows[table.name]:
                        copy.write_row(row)

    def rollback() -> None:
        conn.execute("BEGIN")
        conn.execute("UPDATE incidents SET status = 'closed' WHERE incident_id = 'INC_001'")
        conn.execute("ROLLBACK")

    reloads = [_ms(reload)[0] for _ in range(runs)]
    rollbacks = [_ms(rollback)[0] for _ in range(runs)]
    conn.close()
    sandbox.close()
    return {"truncate_reload": _median(reloads), "rollback": _median(rollbacks)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--url", default=URL)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    substrate = world_substrate(get_world("enterprise"), args.url)
    assert isinstance(substrate, PostgresSubstrate)
    substrate.ensure_template()  # built once per world; not a per-run cost
    rows = sum(
        substrate.template.open().execute(f"SELECT COUNT(*) FROM {quote(t)}").fetchone()[0]
        for t in substrate.schema.tables
    )
    pg = measure_postgres(substrate, args.runs)
    pooled = world_substrate(get_world("enterprise"), args.url + "?reset=rollback")
    assert isinstance(pooled, PostgresSubstrate)
    rollback = measure_postgres(pooled, args.runs)
    lite = measure_sqlite(args.runs)
    resets = measure_resets(substrate, args.runs)
    result = {
        "rows": rows,
        "runs": args.runs,
        "postgresql": pg,
        "postgresql_rollback": rollback,
        "sqlite": lite,
        **resets,
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"enterprise world: {rows} rows, {args.runs} runs each, medians in ms")
    print(f"{'phase':<10}{'clone':>10}{'rollback':>10}{'sqlite':>10}")
    for phase in ("seed", "dump", "cleanup"):
        print(f"{phase:<10}{pg[phase]:>10.1f}{rollback[phase]:>10.1f}{lite[phase]:>10.1f}")
    print(f"reset by truncate + reload: {resets['truncate_reload']:.1f}")
    print(f"reset by rollback:          {resets['rollback']:.1f}")


if __name__ == "__main__":
    main()
