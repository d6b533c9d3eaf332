"""What pruning a PostgreSQL server reports: one `Pruned` per kaudit database on it.

Types only, so the catalog that decides (`_catalog`), the API that asks (`_prune`) and
the substrate that names its databases (`_substrate`) share them without importing
each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["run", "pool", "template", "build", "role"]
"""What kaudit left on a server is: a run's database, a rollback pool's, a template, a
build, or an agent's login role (`role`, named in `Pruned.name` like a database)."""
Action = Literal["dropped", "would drop", "kept"]


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
