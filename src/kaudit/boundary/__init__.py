"""Permission boundaries: the identity a run acts as, enforced beneath the agent.

The layer is here; the enforcement is each substrate's own (`GuardedSandbox.guard`):
SQLite's in `kaudit.substrate`, PostgreSQL's in `kaudit.postgres`, a plugin's in its
package.
"""

from kaudit.boundary._choice import guard_for
from kaudit.boundary._layer import BoundaryLayer
from kaudit.substrate import Denial, Guard, GuardedSandbox, SqliteGuard

__all__ = ["BoundaryLayer", "Denial", "Guard", "GuardedSandbox", "SqliteGuard", "guard_for"]
