"""Permission boundaries: the identity a run acts as, enforced beneath the agent."""

from kaudit.boundary._layer import BoundaryLayer
from kaudit.boundary._sqlite import Denial, SqliteGuard

__all__ = ["BoundaryLayer", "Denial", "SqliteGuard"]
