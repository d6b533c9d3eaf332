"""Random CSM background: accounts, contacts, contracts, installed base, cases, articles.

Random children attach only to random accounts (ACC_011 on) and random cases never
enter the Vendor Liaison queues, so the curated scenarios keep their exact size.
"""

from __future__ import annotations

import random
import sqlite3

from kaudit.worlds.enterprise import fixtures
from kaudit.worlds.enterprise.fixtures import insert
from kaudit.worlds.enterprise.vocabulary import (
    CASE_SUBJECTS,
    FIRST,
    FORMS,
    KINDS,
    LAST,
    WORDS,
    Record,
    stamp,
    weighted,
)


def populate_accounts(conn: sqlite3.Connection, rng: random.Random) -> list[str]:
    """Random customer accounts ACC_011.., some deliberately sharing a stem with a sibling."""
    rows: list[Record] = []
    out: list[str] = []
    stems: list[str] = []
    for n in range(11, 121):
        if stems and rng.random() < 0.25:
            name = f"{rng.choice(stems)} {rng.choice(FORMS)}"
        else:
            stem = f"{rng.choice(WORDS)} {rng.choice(KINDS)}"
            stems.append(stem)
            name = f"{stem} {rng.choice(FORMS)}"
        status = weighted(rng, {"active": 8, "inactive": 1, "prospect": 1})
        rows.append(
            (
                f"ACC_{n:03d}",
                name,
                rng.choice(("retail", "energy", "software", "health")),
                rng.choice(("NA", "EU", "APAC")),
                rng.choice(("gold", "silver", "bronze")),
                status,
                stamp(rng),
            )
        )
        out.append(f"ACC_{n:03d}")
    insert(conn, "accounts", "account_id, name, industry, region, tier, status, updated_at", rows)
    return out


def populate_csm(conn: sqlite3.Connection, rng: random.Random, accounts: list[str]) -> None:
    """Contacts, contracts, entitlements, installed base, cases, SLAs, interactions, articles."""
    contacts: list[Record] = []
    contracts: list[Record] = []
    entitlements: list[Record] = []
    installs: list[Record] = []
    for n in range(9, 409):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        role = rng.choice(("billing", "technical", "executive", "admin"))
        contacts.append(
            (
                f"CON_{n:03d}",
                rng.choice(accounts),
                f"{first} {last}",
                f"{first}.{last}{n}@example.com".lower(),
                role,
                int(rng.random() < 0.9),
                stamp(rng),
            )
        )
    for n in range(7, 287):
        start = stamp(rng, -400, 100)[:10]
        status = weighted(rng, {"active": 5, "expired": 3, "canceled": 1, "draft": 1})
        contracts.append(
            (
                f"CTR_{n:03d}",
                f"CNTR{n + 1000:07d}",
                rng.choice(accounts),
                rng.choice(("support", "subscription", "maintenance")),
                status,
                start,
                f"{int(start[:4]) + 1}{start[4:]}",
                float(rng.randrange(1000, 60000)),
                stamp(rng),
            )
        )
        for _ in range(rng.randrange(1, 3)):
            entitlements.append(
                (
                    f"ENT_{len(entitlements) + 4:03d}",
                    f"CTR_{n:03d}",
                    f"PRD_{rng.randrange(1, 51):03d}",
                    "active" if status == "active" else "expired",
                    rng.randrange(1, 200),
                    start,
                    stamp(rng),
                )
            )
    for n in range(5, 485):
        serial = f"SN-{rng.randrange(1000, 9999)}-{rng.choice('ABCDEFGHJK')}{rng.choice('XYZ')}{n}"
        installs.append(
            (
                f"INS_{n:03d}",
                rng.choice(accounts),
                f"PRD_{rng.randrange(1, 51):03d}",
                serial,
                weighted(rng, {"in_use": 8, "in_repair": 1, "retired": 1}),
                stamp(rng)[:10],
                stamp(rng),
            )
        )
    insert(
        conn, "contacts", "contact_id, account_id, name, email, role, active, updated_at", contacts
    )
    insert(
        conn,
        "contracts",
        "contract_id, number, account_id, contract_type, status, "
        "start_date, end_date, price, updated_at",
        contracts,
    )
    insert(
        conn,
        "entitlements",
        "entitlement_id, contract_id, product_id, status, units, end_date, updated_at",
        entitlements,
    )
    insert(
        conn,
        "installed_products",
        "install_id, account_id, product_id, serial_number, status, installed_at, updated_at",
        installs,
    )
    _background_cases(conn, rng, accounts)
    articles = []
    for n in range(4, 104):
        title = f"How to: {rng.choice(CASE_SUBJECTS).lower()}"
        articles.append(
            (
                f"KB_{n:03d}",
                f"KB{n + 1000:07d}",
                title,
                f"PRD_{rng.randrange(1, 51):03d}",
                weighted(rng, {"published": 6, "draft": 2, "review": 1, "retired": 1}),
                int(rng.random() < 0.2),
                None,
                stamp(rng),
            )
        )
    insert(
        conn,
        "knowledge_articles",
        "article_id, number, title, product_id, status, "
        "legal_review_required, legal_reviewed_by, updated_at",
        articles,
    )


def _background_cases(conn: sqlite3.Connection, rng: random.Random, accounts: list[str]) -> None:
    """Cases land only in teams no scenario counts (never the Vendor Liaison queues)."""
    teams = [t for t, _ in fixtures.SUPPORT_TEAMS if t not in fixtures.CURATED_TEAMS]
    statuses = {"new": 2, "in_progress": 3, "pending_customer": 1, "resolved": 2, "closed": 4}
    cases, slas, interactions = [], [], []
    for n in range(9, 769):
        case_id = f"CS_{n:03d}"
        opened = stamp(rng)
        status = weighted(rng, statuses)
        cases.append(
            (
                case_id,
                f"CS{n + 1000:07d}",
                rng.choice(accounts),
                None,
                f"PRD_{rng.randrange(1, 51):03d}",
                rng.choice(CASE_SUBJECTS),
                status,
                rng.choice(("critical", "high", "moderate", "low")),
                rng.choice(teams),
                opened,
                opened,
            )
        )
        done = status in ("resolved", "closed")
        for kind in ("response", "resolution"):
            stage = "completed" if done or kind == "response" else "in_progress"
            slas.append((case_id, kind, stage, opened))
        if rng.random() < 0.5:
            interactions.append(
                (case_id, "email", "outbound", "Auto-reply: ticket received", opened)
            )
        for _ in range(rng.randrange(0, 2)):
            interactions.append(
                (
                    case_id,
                    rng.choice(("email", "phone", "chat", "portal")),
                    rng.choice(("inbound", "outbound")),
                    "Customer follow-up",
                    stamp(rng),
                )
            )
    insert(
        conn,
        "cases",
        "case_id, number, account_id, contact_id, product_id, subject, status, "
        "priority, team_id, opened_at, updated_at",
        cases,
    )
    insert(conn, "case_slas", "case_id, sla_type, stage, due_at", slas)
    insert(
        conn,
        "interactions",
        "interaction_id, case_id, channel, direction, summary, created_at",
        [(f"INT_{i + 7:04d}", *row) for i, row in enumerate(interactions)],
    )
