"""EnterpriseOps-Gym servers emulated offline, without containers, as kaudit worlds.

The emulation infers each server's schema from its seed rows, key registry and tool
schemas, and implements every selected tool with one of a few generic shapes (see
`ToolPlan`). The AgentRelBench tasks that run on these worlds are imported by the
`agentrelbench:PATH` suite loader (`kaudit.suites`).
"""

from kaudit.worlds.eog._registry import DomainRegistry, ToolTagInfo, load_registry
from kaudit.worlds.eog._resolve import Shape, ToolPlan, classify, plan_tool, resolve_table
from kaudit.worlds.eog._seed import Seed, SeedStatement, read_seed
from kaudit.worlds.eog._shapes import EMULATED_NOW, Caller, IdScheme, id_scheme, next_id
from kaudit.worlds.eog._tables import TableInfo, table_infos
from kaudit.worlds.eog._world import EMULATION_VERSION, EogWorld

__all__ = [
    "EMULATED_NOW",
    "EMULATION_VERSION",
    "Caller",
    "DomainRegistry",
    "EogWorld",
    "IdScheme",
    "Seed",
    "SeedStatement",
    "Shape",
    "TableInfo",
    "ToolPlan",
    "ToolTagInfo",
    "classify",
    "id_scheme",
    "load_registry",
    "next_id",
    "plan_tool",
    "read_seed",
    "resolve_table",
    "table_infos",
]
