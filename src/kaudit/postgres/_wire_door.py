"""The PostgreSQL side of the world door for one run: the agent's role behind a proxy.

`open` creates the run's login role (its rights, or the identity's boundary) and starts
the loopback proxy in front of the run's database; the agent gets one URL,
`postgresql://ROLE:PASSWORD@127.0.0.1:PORT/DATABASE`. `close` stops the proxy, drops
the role and returns what the proxy saw: the faults it injected and the writes the
boundary refused, each with the statement. The run's database itself stays the
substrate's: dumped and dropped with the run.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from urllib.parse import quote

from psycopg.conninfo import conninfo_to_dict

from kaudit.errors import SubstrateError
from kaudit.postgres._agent_role import AgentRole, create_agent_role
from kaudit.postgres._guard import denial_of
from kaudit.postgres._proxy import DEFAULT_HOLD, WireProxy, upstream_of
from kaudit.postgres._wire_faults import WireFaults
from kaudit.postgres._wire_session import Denier, WireLog
from kaudit.spec import FaultRule, Identity
from kaudit.substrate import ForeignKey, Schema
from kaudit.substrate._schema import INTERNAL_PREFIX

_NOT_OWNER = re.compile(r"must be owner of (?:table|relation|sequence|view) (.+)$")
_DENIED = re.compile(r"permission denied for (?:table|relation|sequence|view) (.+)$")


class WireDoor:
    """One run's agent role and proxy; `open` once, then `close` once.

    `server` is any URL of the server whose user may create roles (the run's database
    URL will do); `schema` and `ownership` are needed only to install an identity's
    boundary the run's gateway has not installed already.
    """

    def __init__(
        self,
        server: str,
        database: str,
        schema: Schema | None = None,
        ownership: Sequence[ForeignKey] = (),
        *,
        hold: float = DEFAULT_HOLD,
    ) -> None:
        self.server, self.database, self.schema = server, database, schema
        self.ownership = tuple(ownership)
        self.hold = hold
        self._role: AgentRole | None = None
        self._proxy: WireProxy | None = None

    def open(self, faults: Sequence[FaultRule], seed: int, identity: Identity | None) -> str:
        """Create the role, start the proxy; the URL the agent's own code connects to.

        However it fails or is interrupted once the role exists, what it made is undone
        (the proxy stopped, the role dropped) before the failure goes on: a run that
        never got its door leaves no login role or listener behind.

        Raises:
            SubstrateError: the role cannot be created or the proxy cannot listen.
        """
        role = create_agent_role(self.server, self.database, identity, self.schema, self.ownership)
        self._role = role
        try:
            self._proxy = WireProxy(
                upstream_of(conninfo_to_dict(self.server)),
                database=self.database,
                user=role.name,
                faults=WireFaults(faults, seed),
                denier=_denier(identity, role.name),
                hold=self.hold,
            )
            port = self._proxy.start()
            password = quote(role.password)
        except BaseException:
            with contextlib.suppress(SubstrateError):  # the first failure is the one to report
                self.close()
            raise
        return f"postgresql://{role.name}:{password}@127.0.0.1:{port}/{self.database}"

    def close(self) -> WireLog:
        """Stop the proxy and drop the role (its sessions ended first); what was seen.

        Safe to call again, and after an `open` that failed half-way.
        """
        proxy, self._proxy = self._proxy, None
        try:
            return proxy.stop() if proxy is not None else WireLog()
        finally:
            if self._role is not None:
                role, self._role = self._role, None
                role.drop()


def _denier(identity: Identity | None, role: str) -> Denier:
    """How a refusal in an ErrorResponse becomes (table, key, reason)."""

    def deny(fields: dict[str, str], statement: str) -> tuple[str, str | None, str] | None:
        code, message, detail = fields.get("C", ""), fields.get("M", ""), fields.get("D")
        denied = _DENIED.match(message)
        if code == "42501" and denied is not None and denied.group(1).startswith(INTERNAL_PREFIX):
            return denied.group(1), None, "kaudit's change log is not part of the world"
        if identity is not None:
            found = denial_of(identity, code, message, detail, statement)
            if found is not None:
                return found.table, found.key, found.reason
        if code != "42501":
            return None
        owner = _NOT_OWNER.match(message)
        if owner is not None:
            return owner.group(1), None, f"role {role} owns no table of the world"
        denied = _DENIED.match(message)
        if denied is not None:
            return denied.group(1), None, f"role {role} has no such right on {denied.group(1)}"
        return None

    return deny
