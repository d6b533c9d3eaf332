"""Deterministic seed data: fixed base records, curated scenarios, then a random background.

Everything comes from one `random.Random(SEED)` and fixed dates (January to mid-June
2026), never the clock, so two builds give identical bytes. The background is what
makes a careless filter expensive: thousands of incidents, SLAs, cases and invoices,
many with look-alike titles, spread over the same organizations as the scenarios.
"""

from __future__ import annotations

import random
import sqlite3

from kaudit.worlds.enterprise import background_billing, background_csm, background_itsm, fixtures
from kaudit.worlds.enterprise.fixtures import insert
from kaudit.worlds.enterprise.schema import create_schema
from kaudit.worlds.enterprise.vocabulary import FIRST, LAST, WORDS

SEED = 20260615


def build(conn: sqlite3.Connection) -> None:
    """Create the schema and fill it: base, curated scenarios, then the background."""
    rng = random.Random(SEED)
    create_schema(conn)
    users = _insert_base(conn, rng)
    fixtures.insert_scenarios(conn)
    background_itsm.populate_itsm(conn, rng, users)
    accounts = background_csm.populate_accounts(conn, rng)
    background_csm.populate_csm(conn, rng, accounts)
    background_billing.populate_billing(conn, rng, accounts)


def _insert_base(conn: sqlite3.Connection, rng: random.Random) -> dict[str, list[str]]:
    """Organizations, users, groups, SLA definitions, teams, accounts and products."""
    insert(conn, "organizations", "org_id, name, domain, region", fixtures.ORGANIZATIONS)
    users: dict[str, list[str]] = {org[0]: [] for org in fixtures.ORGANIZATIONS}
    rows, members = [], []
    titles = ("Engineer", "Analyst", "Manager", "Change Manager", "Technician")
    for n in range(1, 321):
        org_id, _, domain, _ = fixtures.ORGANIZATIONS[(n - 1) // 5 if n <= 40 else n % 8]
        first, last = rng.choice(FIRST), rng.choice(LAST)
        user_id = f"USR_{n:03d}"
        email = f"{first}.{last}{n}@{domain}".lower()
        rows.append((user_id, org_id, f"{first} {last}", email, rng.choice(titles), 1))
        users[org_id].append(user_id)
    insert(conn, "users", "user_id, org_id, name, email, title, active", rows)
    groups = []
    for i, (org_id, *_) in enumerate(fixtures.ORGANIZATIONS):
        for j, name in enumerate(fixtures.GROUP_NAMES):
            group_id = f"GRP_{i * 5 + j + 1:03d}"
            groups.append((group_id, org_id, name))
            for user_id in rng.sample(users[org_id], 3):
                members.append((group_id, user_id))
    insert(conn, "assignment_groups", "group_id, org_id, name", groups)
    insert(conn, "group_members", "group_id, user_id", members)
    insert(
        conn, "sla_definitions", "sla_id, name, priority, target_hours", fixtures.SLA_DEFINITIONS
    )
    insert(conn, "support_teams", "team_id, name", fixtures.SUPPORT_TEAMS)
    base = "2026-01-05T09:00:00Z"
    insert(
        conn,
        "accounts",
        "account_id, name, industry, region, tier, status, updated_at",
        [(*row, "active", base) for row in fixtures.ACCOUNTS],
    )
    products = [(*row, 1, base) for row in fixtures.PRODUCTS]
    for n in range(6, 51):
        family = rng.choice(("monitoring", "backup", "services", "security", "network"))
        name = f"{rng.choice(WORDS)} {family.title()} {rng.choice(('Lite', 'Pro', 'Plus', 'Max'))}"
        sku = f"{family[:3].upper()}-{n:03d}"
        price = round(rng.randrange(50, 5000) + rng.choice((0, 0.5, 0.99)), 2)
        products.append((f"PRD_{n:03d}", sku, name, family, price, 1, base))
    insert(
        conn, "products", "product_id, sku, name, family, list_price, active, updated_at", products
    )
    return users
