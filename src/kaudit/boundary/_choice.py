"""Which guard enforces an identity: the one the sandbox's own substrate brings."""

from __future__ import annotations

from collections.abc import Sequence

from kaudit.errors import SubstrateError
from kaudit.spec import Identity
from kaudit.substrate import ForeignKey, Guard, GuardedSandbox, Sandbox


def guard_for(sandbox: Sandbox, identity: Identity, ownership: Sequence[ForeignKey] = ()) -> Guard:
    """The guard `sandbox` installs for `identity` (`GuardedSandbox.guard`).

    Each substrate enforces an identity its own way (SQLite's authorizer, PostgreSQL's
    roles and row-level security, a plugin's own), so the sandbox it seeded is asked.
    `ownership` adds the foreign keys the world declares (its substrate's `ownership`)
    to the schema's own, for the scope to follow.

    Raises:
        SubstrateError: the sandbox's substrate brings no guard, or cannot enforce this
            identity.
    """
    if isinstance(sandbox, GuardedSandbox):
        return sandbox.guard(identity, ownership)
    kind = type(sandbox)
    raise SubstrateError(
        f"run {sandbox.run_id}: identity {identity.role!r} cannot be enforced: the substrate "
        f"of {kind.__module__}.{kind.__qualname__} gives its sandboxes no guard()"
    )
