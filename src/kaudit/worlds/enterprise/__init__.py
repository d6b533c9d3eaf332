"""The built-in enterprise world: ITSM, CSM and billing over one SQLite database.

Importing this package registers the world as `enterprise`. Money is USD dollars stored
as REAL rounded to cents; the clock is fixed (`NOW`), so runs are reproducible.
"""

from __future__ import annotations

from kaudit.tools import Tool
from kaudit.worlds._world import PythonWorld, register_world
from kaudit.worlds.enterprise import (
    background_billing,
    background_csm,
    background_itsm,
    fixtures,
    schema,
    seed,
    tools_billing,
    tools_csm,
    tools_itsm,
    vocabulary,
)

VERSION = "1"

VERTICAL_TOOLS: dict[str, tuple[Tool, ...]] = {
    "itsm": tools_itsm.ITSM_TOOLS,
    "csm": tools_csm.CSM_TOOLS,
    "billing": tools_billing.BILLING_TOOLS,
}


def enterprise_world() -> PythonWorld:
    """The enterprise world: schema, deterministic seed and every vertical's tools."""
    tools = {t.name: t for vertical in VERTICAL_TOOLS.values() for t in vertical}
    return PythonWorld(
        name="enterprise",
        version=VERSION,
        build=seed.build,
        tools=tools,
        verticals={name: tuple(t.name for t in ts) for name, ts in VERTICAL_TOOLS.items()},
        volatile=schema.VOLATILE,
        source=(
            schema,
            seed,
            fixtures,
            vocabulary,
            background_itsm,
            background_csm,
            background_billing,
            fixtures.scenario_digest(),
        ),
    )


register_world("enterprise")(enterprise_world)

__all__ = ["VERSION", "VERTICAL_TOOLS", "enterprise_world"]
