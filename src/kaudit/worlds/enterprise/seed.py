"""Deterministic seed data: fixed base records, curated scenarios, then a random background.

Everything comes from one `random.Random(SEED)` and fixed dates (January to mid-June
2026), never the clock, so two builds give identical bytes. The background is what
makes a careless filter expensive: thousands of incidents, SLAs, cases and invoices,
many with look-alike titles, spread over the same organizations as the scenarios.
"""

from __future__ import annotations

import random
import sqlite3
from datetime import datetime, timedelta
from typing import Any

from kaudit.worlds.enterprise import fixtures, fixtures_billing
from kaudit.worlds.enterprise.fixtures import insert
from kaudit.worlds.enterprise.schema import create_schema

SEED = 20260615
_EPOCH = datetime(2026, 1, 1)
_FIRST = ("Ava", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hugo", "Isla", "Jonas",
          "Kemi", "Liam", "Maya", "Noah", "Olga", "Pavel", "Quinn", "Rosa", "Sven", "Tara")  # fmt: skip
_LAST = ("Nguyen", "Smith", "Garcia", "Kowalski", "Okafor", "Tanaka", "Muller", "Rossi",
         "Haddad", "Silva", "Brown", "Ivanova", "Khan", "Larsen", "Moreau", "Chen")  # fmt: skip
_WORDS = ("Blue", "Summit", "Vertex", "Harbor", "Cedar", "Quantum", "Orion", "Pioneer",
          "Silver", "Granite", "Nimbus", "Atlas", "Beacon", "Crescent")  # fmt: skip
_KINDS = ("Logistics", "Systems", "Foods", "Energy", "Health", "Labs", "Retail", "Media")
_FORMS = ("Inc", "LLC", "Group", "Ltd", "Holdings", "Co")
_INCIDENT_TITLES = (
    "Email not syncing on mobile", "VPN disconnects every hour", "Printer offline",
    "Password reset request", "Laptop battery swelling", "Shared drive access denied",
    "Slow ERP screens", "Teams calls dropping", "Keyboard keys not responding",
    "Monitor flickering", "Branch router packet loss", "SSO login fails after password change",
    "Disk space low on file server", "Backup job failed", "Certificate expiring soon",
)  # fmt: skip
_CHANGE_TITLES = (
    "Patch database servers", "Rotate backup encryption keys", "Upgrade VPN concentrator",
    "Email gateway maintenance window", "Replace core switch", "Firewall rule clean-up",
    "Customer portal upgrade", "Renew TLS certificates", "Decommission legacy app server",
)  # fmt: skip
_CASE_SUBJECTS = (
    "Cannot log in to portal", "Agent crash after update", "Licence key not delivered",
    "Backup restore failing", "Invoice question", "Vendor RMA request", "Slow dashboard",
    "Alert emails missing", "Printer driver crashes after update", "Upgrade assistance",
)  # fmt: skip
_CI_KINDS = ("app-srv", "db-node", "web", "mail-gw", "file-srv", "vpn-edge", "k8s-worker")


def stamp(rng: random.Random, first_day: int = 0, last_day: int = 165) -> str:
    """An ISO UTC timestamp between two day offsets from 2026-01-01."""
    moment = _EPOCH + timedelta(seconds=rng.randrange(first_day * 86400, last_day * 86400))
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _weighted(rng: random.Random, options: dict[str, int]) -> str:
    return rng.choices(list(options), weights=list(options.values()))[0]


def build(conn: sqlite3.Connection) -> None:
    """Create the schema and fill it: base, curated scenarios, then the background."""
    rng = random.Random(SEED)
    create_schema(conn)
    users = _insert_base(conn, rng)
    fixtures.insert_itsm(conn)
    fixtures.insert_csm(conn)
    fixtures_billing.insert_billing(conn)
    _background_itsm(conn, rng, users)
    accounts = _background_accounts(conn, rng)
    _background_csm(conn, rng, accounts)
    _background_billing(conn, rng, accounts)


def _insert_base(conn: sqlite3.Connection, rng: random.Random) -> dict[str, list[str]]:
    """Organizations, users, groups, SLA definitions, teams, accounts and products."""
    insert(conn, "organizations", "org_id, name, domain, region", fixtures.ORGANIZATIONS)
    users: dict[str, list[str]] = {org[0]: [] for org in fixtures.ORGANIZATIONS}
    rows, members = [], []
    titles = ("Engineer", "Analyst", "Manager", "Change Manager", "Technician")
    for n in range(1, 321):
        org_id, _, domain, _ = fixtures.ORGANIZATIONS[(n - 1) // 5 if n <= 40 else n % 8]
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
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
    insert(conn, "sla_definitions", "sla_id, name, priority, target_hours", fixtures.SLA_DEFINITIONS)
    insert(conn, "support_teams", "team_id, name", fixtures.SUPPORT_TEAMS)
    base = "2026-01-05T09:00:00Z"
    insert(conn, "accounts", "account_id, name, industry, region, tier, status, updated_at",
           [(*row, "active", base) for row in fixtures.ACCOUNTS])  # fmt: skip
    products = [(*row, 1, base) for row in fixtures.PRODUCTS]
    for n in range(6, 51):
        family = rng.choice(("monitoring", "backup", "services", "security", "network"))
        name = f"{rng.choice(_WORDS)} {family.title()} {rng.choice(('Lite', 'Pro', 'Plus', 'Max'))}"
        sku = f"{family[:3].upper()}-{n:03d}"
        price = round(rng.randrange(50, 5000) + rng.choice((0, 0.5, 0.99)), 2)
        products.append((f"PRD_{n:03d}", sku, name, family, price, 1, base))
    insert(conn, "products", "product_id, sku, name, family, list_price, active, updated_at", products)
    return users


def _groups_of(org_index: int) -> list[str]:
    return [
        f"GRP_{org_index * 5 + j + 1:03d}"
        for j in range(len(fixtures.GROUP_NAMES))
        if f"GRP_{org_index * 5 + j + 1:03d}" not in fixtures.CURATED_GROUPS
    ]


def _background_itsm(conn: sqlite3.Connection, rng: random.Random, users: dict[str, list[str]]) -> None:
    """CIs, incidents with SLAs, problems with links, changes with CAB decisions, outbox."""
    orgs = [org[0] for org in fixtures.ORGANIZATIONS]
    cis: dict[str, list[str]] = {org: [] for org in orgs}
    rows: list[tuple[Any, ...]] = []
    for n in range(6, 251):
        index = rng.randrange(len(orgs))
        name = f"{rng.choice(_CI_KINDS)}-{rng.randrange(1, 40):02d}"
        status = _weighted(rng, {"operational": 8, "maintenance": 1, "retired": 1})
        cost = round(rng.randrange(20, 4000) + rng.choice((0, 0.25, 0.5)), 2)
        ci_id = f"CI_{n:03d}"
        cis[orgs[index]].append(ci_id)
        rows.append((ci_id, orgs[index], name, rng.choice(("server", "application", "network")),
                     status, cost, rng.choice(_groups_of(index)), stamp(rng)))  # fmt: skip
    insert(conn, "configuration_items",
           "ci_id, org_id, name, ci_class, status, monthly_cost, owner_group_id, updated_at", rows)  # fmt: skip
    incidents = _background_incidents(conn, rng, users, cis)
    _background_problems(conn, rng, incidents)
    changes = _background_changes(conn, rng, users, cis)
    _background_notifications(conn, rng, users, incidents, changes)


def _background_incidents(
    conn: sqlite3.Connection,
    rng: random.Random,
    users: dict[str, list[str]],
    cis: dict[str, list[str]],
) -> list[tuple[str, str, str]]:
    orgs = [org[0] for org in fixtures.ORGANIZATIONS]
    statuses = {"new": 2, "in_progress": 3, "on_hold": 1, "resolved": 2, "closed": 5, "canceled": 1}
    stages = {"new": "in_progress", "in_progress": "in_progress", "on_hold": "paused",
              "resolved": "completed", "closed": "completed", "canceled": "canceled"}  # fmt: skip
    sla_by_priority = {"critical": 1, "high": 3, "moderate": 5, "low": 7}
    rows, slas, out = [], [], []
    for n in range(41, 1141):
        index = rng.randrange(len(orgs))
        org_id = orgs[index]
        status = _weighted(rng, statuses)
        priority = _weighted(rng, {"critical": 1, "high": 3, "moderate": 5, "low": 3})
        opened = stamp(rng, 0, 160)
        resolved = opened if status in ("resolved", "closed") else None
        closed = opened if status == "closed" else None
        incident_id = f"INC_{n:03d}"
        ci = rng.choice(cis[org_id]) if cis[org_id] and rng.random() < 0.5 else None
        rows.append((incident_id, f"INC{n + 1000:07d}", org_id, rng.choice(_INCIDENT_TITLES),
                     rng.choice(("network", "hardware", "software", "access")), status, priority,
                     rng.choice(users[org_id]), rng.choice(_groups_of(index)), ci, opened,
                     resolved, closed, opened))  # fmt: skip
        out.append((incident_id, org_id, status))
        first = sla_by_priority[priority]
        for offset in (0, 1) if rng.random() < 0.3 else (0,):
            stage = stages[status] if rng.random() < 0.85 else "breached"
            slas.append((f"TSLA_{len(slas) + 5:03d}", incident_id, f"SLA_{first + offset:03d}",
                         stage, opened, opened))  # fmt: skip
    insert(conn, "incidents",
           "incident_id, number, org_id, title, category, status, priority, caller_id, "
           "assignment_group_id, ci_id, opened_at, resolved_at, closed_at, updated_at", rows)  # fmt: skip
    insert(conn, "incident_slas",
           "incident_sla_id, incident_id, sla_id, stage, started_at, due_at", slas)  # fmt: skip
    return out


def _background_problems(
    conn: sqlite3.Connection, rng: random.Random, incidents: list[tuple[str, str, str]]
) -> None:
    orgs = [org[0] for org in fixtures.ORGANIZATIONS]
    rows, links = [], set()
    for n in range(11, 81):
        index = rng.randrange(len(orgs))
        org_id = orgs[index]
        status = rng.choice(("new", "assess", "root_cause_analysis", "fix_in_progress", "closed"))
        opened = stamp(rng)
        rows.append((f"PRB_{n:03d}", f"PRB{n + 100:07d}", org_id,
                     f"Recurring: {rng.choice(_INCIDENT_TITLES).lower()}", status,
                     rng.choice(("high", "moderate", "low")), rng.choice(_groups_of(index)),
                     opened, opened))  # fmt: skip
        same_org = [i for i, org, _ in incidents if org == org_id]
        for incident_id in rng.sample(same_org, min(len(same_org), rng.randrange(1, 5))):
            links.add((f"PRB_{n:03d}", incident_id, opened))
    insert(conn, "problems", "problem_id, number, org_id, title, status, priority, "
           "assignment_group_id, opened_at, updated_at", rows)  # fmt: skip
    insert(conn, "problem_incidents", "problem_id, incident_id, linked_at", sorted(links))


def _background_changes(
    conn: sqlite3.Connection,
    rng: random.Random,
    users: dict[str, list[str]],
    cis: dict[str, list[str]],
) -> list[tuple[str, str]]:
    """Background changes are never waiting in `authorize`: only scenarios are."""
    orgs = [org[0] for org in fixtures.ORGANIZATIONS]
    statuses = {"new": 2, "assess": 2, "scheduled": 2, "implement": 1, "review": 1, "closed": 5,
                "canceled": 1}  # fmt: skip
    rows, approvals, out = [], [], []
    for n in range(15, 161):
        index = rng.randrange(len(orgs))
        org_id = orgs[index]
        status = _weighted(rng, statuses)
        cab = int(rng.random() < 0.5)
        start = stamp(rng, 10, 200)
        change_id = f"CHG_{n:03d}"
        ci = rng.choice(cis[org_id]) if cis[org_id] else None
        rows.append((change_id, f"CHG{n + 100:07d}", org_id, rng.choice(_CHANGE_TITLES),
                     rng.choice(("standard", "normal", "emergency")), status,
                     rng.choice(("low", "moderate", "high")), cab, rng.choice(users[org_id]),
                     rng.choice(_groups_of(index)), ci, start, start, start))  # fmt: skip
        out.append((change_id, org_id))
        if cab and status not in ("new", "assess"):
            for approver in rng.sample(users[org_id], 2):
                approvals.append((change_id, approver, "approved", start))
    insert(conn, "changes",
           "change_id, number, org_id, title, change_type, status, risk, cab_required, "
           "requested_by, assignment_group_id, ci_id, planned_start, planned_end, updated_at",
           rows)  # fmt: skip
    insert(conn, "cab_approvals", "change_id, approver_id, decision, decided_at", approvals)
    return out


def _background_notifications(
    conn: sqlite3.Connection,
    rng: random.Random,
    users: dict[str, list[str]],
    incidents: list[tuple[str, str, str]],
    changes: list[tuple[str, str]],
) -> None:
    rows = []
    for n in range(7, 507):
        created = stamp(rng)
        status = _weighted(rng, {"sent": 6, "queued": 3, "failed": 1})
        if rng.random() < 0.6:
            incident_id, org_id, _ = rng.choice(incidents)
            target: tuple[str | None, str | None] = (incident_id, None)
            subject = f"Update on your incident {incident_id}"
        else:
            change_id, org_id = rng.choice(changes)
            target = (None, change_id)
            subject = f"Planned change {change_id}: {rng.choice(_CHANGE_TITLES)}"
        rows.append((f"NTF_{n:03d}", org_id, *target, rng.choice(users[org_id]), subject, status,
                     created, created if status == "sent" else None))  # fmt: skip
    insert(conn, "notifications",
           "notification_id, org_id, incident_id, change_id, recipient_id, subject, status, "
           "created_at, sent_at", rows)  # fmt: skip


def _background_accounts(conn: sqlite3.Connection, rng: random.Random) -> list[str]:
    """Random customer accounts ACC_011.., some deliberately sharing a stem with a sibling."""
    rows, out, stems = [], [], []
    for n in range(11, 121):
        if stems and rng.random() < 0.25:
            name = f"{rng.choice(stems)} {rng.choice(_FORMS)}"
        else:
            stem = f"{rng.choice(_WORDS)} {rng.choice(_KINDS)}"
            stems.append(stem)
            name = f"{stem} {rng.choice(_FORMS)}"
        status = _weighted(rng, {"active": 8, "inactive": 1, "prospect": 1})
        rows.append((f"ACC_{n:03d}", name, rng.choice(("retail", "energy", "software", "health")),
                     rng.choice(("NA", "EU", "APAC")), rng.choice(("gold", "silver", "bronze")),
                     status, stamp(rng)))  # fmt: skip
        out.append(f"ACC_{n:03d}")
    insert(conn, "accounts", "account_id, name, industry, region, tier, status, updated_at", rows)
    return out


def _background_csm(conn: sqlite3.Connection, rng: random.Random, accounts: list[str]) -> None:
    """Contacts, contracts, entitlements, installed base, cases, SLAs, interactions, articles."""
    contacts, contracts, entitlements, installs = [], [], [], []
    for n in range(9, 409):
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        role = rng.choice(("billing", "technical", "executive", "admin"))
        contacts.append((f"CON_{n:03d}", rng.choice(accounts), f"{first} {last}",
                         f"{first}.{last}{n}@example.com".lower(), role,
                         int(rng.random() < 0.9), stamp(rng)))  # fmt: skip
    for n in range(7, 287):
        start = stamp(rng, -400, 100)[:10]
        status = _weighted(rng, {"active": 5, "expired": 3, "canceled": 1, "draft": 1})
        contracts.append((f"CTR_{n:03d}", f"CNTR{n + 1000:07d}", rng.choice(accounts),
                          rng.choice(("support", "subscription", "maintenance")), status, start,
                          f"{int(start[:4]) + 1}{start[4:]}", float(rng.randrange(1000, 60000)),
                          stamp(rng)))  # fmt: skip
        for _ in range(rng.randrange(1, 3)):
            entitlements.append((f"ENT_{len(entitlements) + 4:03d}", f"CTR_{n:03d}",
                                 f"PRD_{rng.randrange(1, 51):03d}",
                                 "active" if status == "active" else "expired",
                                 rng.randrange(1, 200), start, stamp(rng)))  # fmt: skip
    for n in range(5, 485):
        serial = f"SN-{rng.randrange(1000, 9999)}-{rng.choice('ABCDEFGHJK')}{rng.choice('XYZ')}{n}"
        installs.append((f"INS_{n:03d}", rng.choice(accounts), f"PRD_{rng.randrange(1, 51):03d}",
                         serial, _weighted(rng, {"in_use": 8, "in_repair": 1, "retired": 1}),
                         stamp(rng)[:10], stamp(rng)))  # fmt: skip
    insert(conn, "contacts", "contact_id, account_id, name, email, role, active, updated_at", contacts)
    insert(conn, "contracts", "contract_id, number, account_id, contract_type, status, "
           "start_date, end_date, price, updated_at", contracts)  # fmt: skip
    insert(conn, "entitlements", "entitlement_id, contract_id, product_id, status, units, "
           "end_date, updated_at", entitlements)  # fmt: skip
    insert(conn, "installed_products", "install_id, account_id, product_id, serial_number, "
           "status, installed_at, updated_at", installs)  # fmt: skip
    _background_cases(conn, rng, accounts)
    articles = []
    for n in range(4, 104):
        title = f"How to: {rng.choice(_CASE_SUBJECTS).lower()}"
        articles.append((f"KB_{n:03d}", f"KB{n + 1000:07d}", title, f"PRD_{rng.randrange(1, 51):03d}",
                         _weighted(rng, {"published": 6, "draft": 2, "review": 1, "retired": 1}),
                         int(rng.random() < 0.2), None, stamp(rng)))  # fmt: skip
    insert(conn, "knowledge_articles", "article_id, number, title, product_id, status, "
           "legal_review_required, legal_reviewed_by, updated_at", articles)  # fmt: skip


def _background_cases(conn: sqlite3.Connection, rng: random.Random, accounts: list[str]) -> None:
    """Cases land only in teams no scenario counts (never the Vendor Liaison queues)."""
    teams = [t for t, _ in fixtures.SUPPORT_TEAMS if t not in fixtures.CURATED_TEAMS]
    statuses = {"new": 2, "in_progress": 3, "pending_customer": 1, "resolved": 2, "closed": 4}
    cases, slas, interactions = [], [], []
    for n in range(9, 769):
        case_id = f"CS_{n:03d}"
        opened = stamp(rng)
        status = _weighted(rng, statuses)
        cases.append((case_id, f"CS{n + 1000:07d}", rng.choice(accounts), None,
                      f"PRD_{rng.randrange(1, 51):03d}", rng.choice(_CASE_SUBJECTS), status,
                      rng.choice(("critical", "high", "moderate", "low")), rng.choice(teams),
                      opened, opened))  # fmt: skip
        done = status in ("resolved", "closed")
        for kind in ("response", "resolution"):
            stage = "completed" if done or kind == "response" else "in_progress"
            slas.append((case_id, kind, stage, opened))
        if rng.random() < 0.5:
            interactions.append((case_id, "email", "outbound", "Auto-reply: ticket received", opened))
        for _ in range(rng.randrange(0, 2)):
            interactions.append((case_id, rng.choice(("email", "phone", "chat", "portal")),
                                 rng.choice(("inbound", "outbound")), "Customer follow-up",
                                 stamp(rng)))  # fmt: skip
    insert(conn, "cases", "case_id, number, account_id, contact_id, product_id, subject, status, "
           "priority, team_id, opened_at, updated_at", cases)  # fmt: skip
    insert(conn, "case_slas", "case_id, sla_type, stage, due_at", slas)
    insert(conn, "interactions", "interaction_id, case_id, channel, direction, summary, created_at",
           [(f"INT_{i + 7:04d}", *row) for i, row in enumerate(interactions)])  # fmt: skip


def _background_billing(conn: sqlite3.Connection, rng: random.Random, accounts: list[str]) -> None:
    """Billing accounts BA_011.. for the random customers, with invoices, payments, refunds."""
    names = dict(conn.execute("SELECT account_id, name FROM accounts").fetchall())
    bas, invoices, lines, payments, refunds, payouts, credits = [], [], [], [], [], [], []
    for account_id in accounts:
        ba = f"BA_{account_id[4:]}"
        bas.append((ba, account_id, names[account_id], _weighted(rng, {"active": 9, "frozen": 1}),
                    stamp(rng)))  # fmt: skip
        for _ in range(rng.randrange(3, 9)):
            n = len(invoices) + 19
            invoice_id = f"INV_{n:03d}"
            status = _weighted(rng, {"paid": 5, "issued": 2, "overdue": 1, "draft": 1, "void": 1})
            issued = stamp(rng, 0, 160)[:10]
            total = 0.0
            for line_no in range(1, rng.randrange(2, 5)):
                qty, price = rng.randrange(1, 6), float(rng.randrange(40, 900))
                total += qty * price
                lines.append((invoice_id, line_no, f"PRD_{rng.randrange(1, 51):03d}",
                              "Subscription and services", qty, price, qty * price))  # fmt: skip
            balance = 0.0 if status in ("paid", "void") else total
            invoices.append((invoice_id, f"INV-2026-{n + 100:05d}", ba, status, issued, issued,
                             total, balance, issued))  # fmt: skip
            if status == "paid":
                payment_id = f"PAY_{len(payments) + 11:03d}"
                payments.append((payment_id, invoice_id, ba, total,
                                 rng.choice(("card", "wire", "ach")), "settled", issued))  # fmt: skip
                if rng.random() < 0.12:
                    refund_id = f"RFD_{len(refunds) + 7:03d}"
                    state = _weighted(rng, {"paid": 3, "approved": 1, "rejected": 1, "requested": 1})
                    amount = round(total * rng.choice((0.1, 0.25, 0.5)), 2)
                    refunds.append((refund_id, payment_id, ba, amount, "Customer request", state,
                                    "k.ito", "j.okafor" if state in ("paid", "approved") else None,
                                    issued, issued))  # fmt: skip
                    if state in ("paid", "approved"):
                        payouts.append((f"PO_{len(payouts) + 4:03d}", ba, refund_id, amount,
                                        "sent" if state == "paid" else "queued", issued,
                                        issued if state == "paid" else None))  # fmt: skip
        if rng.random() < 0.4:
            credits.append((f"CRD_{len(credits) + 5:03d}", ba, None, float(rng.randrange(20, 400)),
                            "Goodwill", rng.choice(("open", "applied", "void")), stamp(rng),
                            stamp(rng)))  # fmt: skip
    insert(conn, "billing_accounts", "billing_account_id, account_id, name, status, updated_at", bas)
    insert(conn, "invoices", "invoice_id, number, billing_account_id, status, issued_at, due_at, "
           "total, balance, updated_at", invoices)  # fmt: skip
    insert(conn, "invoice_lines", "invoice_id, line_no, product_id, description, quantity, "
           "unit_price, amount", lines)  # fmt: skip
    insert(conn, "payments", "payment_id, invoice_id, billing_account_id, amount, method, status, "
           "received_at", payments)  # fmt: skip
    insert(conn, "refunds", "refund_id, payment_id, billing_account_id, amount, reason, status, "
           "requested_by, approved_by, created_at, updated_at", refunds)  # fmt: skip
    insert(conn, "payouts", "payout_id, billing_account_id, refund_id, amount, status, created_at, "
           "sent_at", payouts)  # fmt: skip
    insert(conn, "credits", "credit_id, billing_account_id, invoice_id, amount, reason, status, "
           "created_at, updated_at", credits)  # fmt: skip
