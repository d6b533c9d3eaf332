"""Permission boundaries: the identity a run acts as, enforced beneath the agent."""

from kaudit.boundary._choice import guard_for
from kaudit.boundary._layer import BoundaryLayer, Guard
from kaudit.boundary._sqlite import Denial, SqliteGuard

__all__ = ["BoundaryLayer", "Denial", "Guard", "SqliteGuard", "guard_for"]
