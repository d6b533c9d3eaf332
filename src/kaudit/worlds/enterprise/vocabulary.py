"""Word lists, the seed calendar and weighted choice the random background draws from.

Dates are offsets from 2026-01-01, never the clock, so the background is a pure
function of the RNG it is given.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

EPOCH = datetime(2026, 1, 1)

Record = tuple[Any, ...]
"""One row to insert, in the column order of its INSERT."""
FIRST = (
    "Ava",
    "Ben",
    "Chloe",
    "Dev",
    "Elena",
    "Farid",
    "Grace",
    "Hugo",
    "Isla",
    "Jonas",
    "Kemi",
    "Liam",
    "Maya",
    "Noah",
    "Olga",
    "Pavel",
    "Quinn",
    "Rosa",
    "Sven",
    "Tara",
)
LAST = (
    "Nguyen",
    "Smith",
    "Garcia",
    "Kowalski",
    "Okafor",
    "Tanaka",
    "Muller",
    "Rossi",
    "Haddad",
    "Silva",
    "Brown",
    "Ivanova",
    "Khan",
    "Larsen",
    "Moreau",
    "Chen",
)
WORDS = (
    "Blue",
    "Summit",
    "Vertex",
    "Harbor",
    "Cedar",
    "Quantum",
    "Orion",
    "Pioneer",
    "Silver",
    "Granite",
    "Nimbus",
    "Atlas",
    "Beacon",
    "Crescent",
)
KINDS = ("Logistics", "Systems", "Foods", "Energy", "Health", "Labs", "Retail", "Media")
FORMS = ("Inc", "LLC", "Group", "Ltd", "Holdings", "Co")
INCIDENT_TITLES = (
    "Email not syncing on mobile",
    "VPN disconnects every hour",
    "Printer offline",
    "Password reset request",
    "Laptop battery swelling",
    "Shared drive access denied",
    "Slow ERP screens",
    "Teams calls dropping",
    "Keyboard keys not responding",
    "Monitor flickering",
    "Branch router packet loss",
    "SSO login fails after password change",
    "Disk space low on file server",
    "Backup job failed",
    "Certificate expiring soon",
)
CHANGE_TITLES = (
    "Patch database servers",
    "Rotate backup encryption keys",
    "Upgrade VPN concentrator",
    "Email gateway maintenance window",
    "Replace core switch",
    "Firewall rule clean-up",
    "Customer portal upgrade",
    "Renew TLS certificates",
    "Decommission legacy app server",
)
CASE_SUBJECTS = (
    "Cannot log in to portal",
    "Agent crash after update",
    "Licence key not delivered",
    "Backup restore failing",
    "Invoice question",
    "Vendor RMA request",
    "Slow dashboard",
    "Alert emails missing",
    "Printer driver crashes after update",
    "Upgrade assistance",
)
CI_KINDS = ("app-srv", "db-node", "web", "mail-gw", "file-srv", "vpn-edge", "k8s-worker")


def stamp(rng: random.Random, first_day: int = 0, last_day: int = 165) -> str:
    """An ISO UTC timestamp between two day offsets from 2026-01-01."""
    moment = EPOCH + timedelta(seconds=rng.randrange(first_day * 86400, last_day * 86400))
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def weighted(rng: random.Random, options: dict[str, int]) -> str:
    """One key of `options`, drawn with the integer weights given as values."""
    return rng.choices(list(options), weights=list(options.values()))[0]
