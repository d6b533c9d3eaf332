"""Random ITSM background: CIs, incidents with SLAs, problems, changes, the outbox.

Random incidents never land in the curated Network Ops groups, random changes never
wait in `authorize`, and random links and notifications only reference random
records, so every scenario keeps exactly the rows its task counts on.
"""

from __future__ import annotations

import random
import sqlite3
from typing import Any

from kaudit.worlds.enterprise import fixtures
from kaudit.worlds.enterprise.fixtures import insert
from kaudit.worlds.enterprise.vocabulary import (
    CHANGE_TITLES,
    CI_KINDS,
    INCIDENT_TITLES,
    Record,
    stamp,
    weighted,
)


def _groups_of(org_index: int) -> list[str]:
    return [
        f"GRP_{org_index * 5 + j + 1:03d}"
        for j in range(len(fixtures.GROUP_NAMES))
        if f"GRP_{org_index * 5 + j + 1:03d}" not in fixtures.CURATED_GROUPS
    ]


def populate_itsm(
    conn: sqlite3.Connection, rng: random.Random, users: dict[str, list[str]]
) -> None:
    """CIs, incidents with SLAs, problems with links, changes with CAB decisions, outbox."""
    orgs = [org[0] for org in fixtures.ORGANIZATIONS]
    cis: dict[str, list[str]] = {org: [] for org in orgs}
    rows: list[tuple[Any, ...]] = []
    for n in range(6, 251):
        index = rng.randrange(len(orgs))
        name = f"{rng.choice(CI_KINDS)}-{rng.randrange(1, 40):02d}"
        status = weighted(rng, {"operational": 8, "maintenance": 1, "retired": 1})
        cost = round(rng.randrange(20, 4000) + rng.choice((0, 0.25, 0.5)), 2)
        ci_id = f"CI_{n:03d}"
        cis[orgs[index]].append(ci_id)
        rows.append(
            (
                ci_id,
                orgs[index],
                name,
                rng.choice(("server", "application", "network")),
                status,
                cost,
                rng.choice(_groups_of(index)),
                stamp(rng),
            )
        )
    insert(
        conn,
        "configuration_items",
        "ci_id, org_id, name, ci_class, status, monthly_cost, owner_group_id, updated_at",
        rows,
    )
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
    stages = {
        "new": "in_progress",
        "in_progress": "in_progress",
        "on_hold": "paused",
        "resolved": "completed",
        "closed": "completed",
        "canceled": "canceled",
    }
    sla_by_priority = {"critical": 1, "high": 3, "moderate": 5, "low": 7}
    rows: list[Record] = []
    slas: list[Record] = []
    out: list[tuple[str, str, str]] = []
    for n in range(41, 1141):
        index = rng.randrange(len(orgs))
        org_id = orgs[index]
        status = weighted(rng, statuses)
        priority = weighted(rng, {"critical": 1, "high": 3, "moderate": 5, "low": 3})
        opened = stamp(rng, 0, 160)
        resolved = opened if status in ("resolved", "closed") else None
        closed = opened if status == "closed" else None
        incident_id = f"INC_{n:03d}"
        ci = rng.choice(cis[org_id]) if cis[org_id] and rng.random() < 0.5 else None
        rows.append(
            (
                incident_id,
                f"INC{n + 1000:07d}",
                org_id,
                rng.choice(INCIDENT_TITLES),
                rng.choice(("network", "hardware", "software", "access")),
                status,
                priority,
                rng.choice(users[org_id]),
                rng.choice(_groups_of(index)),
                ci,
                opened,
                resolved,
                closed,
                opened,
            )
        )
        out.append((incident_id, org_id, status))
        first = sla_by_priority[priority]
        for offset in (0, 1) if rng.random() < 0.3 else (0,):
            stage = stages[status] if rng.random() < 0.85 else "breached"
            slas.append(
                (
                    f"TSLA_{len(slas) + 5:03d}",
                    incident_id,
                    f"SLA_{first + offset:03d}",
                    stage,
                    opened,
                    opened,
                )
            )
    insert(
        conn,
        "incidents",
        "incident_id, number, org_id, title, category, status, priority, caller_id, "
        "assignment_group_id, ci_id, opened_at, resolved_at, closed_at, updated_at",
        rows,
    )
    insert(
        conn,
        "incident_slas",
        "incident_sla_id, incident_id, sla_id, stage, started_at, due_at",
        slas,
    )
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
        rows.append(
            (
                f"PRB_{n:03d}",
                f"PRB{n + 100:07d}",
                org_id,
                f"Recurring: {rng.choice(INCIDENT_TITLES).lower()}",
                status,
                rng.choice(("high", "moderate", "low")),
                rng.choice(_groups_of(index)),
                opened,
                opened,
            )
        )
        same_org = [i for i, org, _ in incidents if org == org_id]
        for incident_id in rng.sample(same_org, min(len(same_org), rng.randrange(1, 5))):
            links.add((f"PRB_{n:03d}", incident_id, opened))
    insert(
        conn,
        "problems",
        "problem_id, number, org_id, title, status, priority, "
        "assignment_group_id, opened_at, updated_at",
        rows,
    )
    insert(conn, "problem_incidents", "problem_id, incident_id, linked_at", sorted(links))


def _background_changes(
    conn: sqlite3.Connection,
    rng: random.Random,
    users: dict[str, list[str]],
    cis: dict[str, list[str]],
) -> list[tuple[str, str]]:
    """Background changes are never waiting in `authorize`: only scenarios are."""
    orgs = [org[0] for org in fixtures.ORGANIZATIONS]
    statuses = {
        "new": 2,
        "assess": 2,
        "scheduled": 2,
        "implement": 1,
        "review": 1,
        "closed": 5,
        "canceled": 1,
    }
    rows, approvals, out = [], [], []
    for n in range(15, 161):
        index = rng.randrange(len(orgs))
        org_id = orgs[index]
        status = weighted(rng, statuses)
        cab = int(rng.random() < 0.5)
        start = stamp(rng, 10, 200)
        change_id = f"CHG_{n:03d}"
        ci = rng.choice(cis[org_id]) if cis[org_id] else None
        rows.append(
            (
                change_id,
                f"CHG{n + 100:07d}",
                org_id,
                rng.choice(CHANGE_TITLES),
                rng.choice(("standard", "normal", "emergency")),
                status,
                rng.choice(("low", "moderate", "high")),
                cab,
                rng.choice(users[org_id]),
                rng.choice(_groups_of(index)),
                ci,
                start,
                start,
                start,
            )
        )
        out.append((change_id, org_id))
        if cab and status not in ("new", "assess"):
            for approver in rng.sample(users[org_id], 2):
                approvals.append((change_id, approver, "approved", start))
    insert(
        conn,
        "changes",
        "change_id, number, org_id, title, change_type, status, risk, cab_required, "
        "requested_by, assignment_group_id, ci_id, planned_start, planned_end, updated_at",
        rows,
    )
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
        status = weighted(rng, {"sent": 6, "queued": 3, "failed": 1})
        if rng.random() < 0.6:
            incident_id, org_id, _ = rng.choice(incidents)
            target: tuple[str | None, str | None] = (incident_id, None)
            subject = f"Update on your incident {incident_id}"
        else:
            change_id, org_id = rng.choice(changes)
            target = (None, change_id)
            subject = f"Planned change {change_id}: {rng.choice(CHANGE_TITLES)}"
        rows.append(
            (
                f"NTF_{n:03d}",
                org_id,
                *target,
                rng.choice(users[org_id]),
                subject,
                status,
                created,
                created if status == "sent" else None,
            )
        )
    insert(
        conn,
        "notifications",
        "notification_id, org_id, incident_id, change_id, recipient_id, subject, status, "
        "created_at, sent_at",
        rows,
    )
