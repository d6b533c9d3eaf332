"""AgentRelBench tasks on emulated EnterpriseOps-Gym servers, offline and without containers.

Importing this package registers the `agentrelbench:PATH` suite loader. The emulation
infers each server's schema from its seed rows, key registry and tool schemas, and
implements every selected tool with one of a few generic shapes (see `ToolPlan`).
"""

from kaudit.substrate.eog._registry import DomainRegistry, ToolTagInfo, load_registry
from kaudit.substrate.eog._resolve import Shape, ToolPlan, classify, plan_tool, resolve_table
from kaudit.substrate.eog._seed import Seed, SeedStatement, read_seed
from kaudit.substrate.eog._shapes import EMULATED_NOW, Caller, IdScheme, id_scheme, next_id
from kaudit.substrate.eog._suite import find_suite_root, load_agentrelbench_suite, task_folders
from kaudit.substrate.eog._tables import TableInfo, table_infos
from kaudit.substrate.eog._task import TaskSource, load_task_folder
from kaudit.substrate.eog._world import EMULATION_VERSION, EogWorld

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
    "TaskSource",
    "ToolPlan",
    "ToolTagInfo",
    "classify",
    "find_suite_root",
    "id_scheme",
    "load_agentrelbench_suite",
    "load_registry",
    "load_task_folder",
    "next_id",
    "plan_tool",
    "read_seed",
    "resolve_table",
    "table_infos",
    "task_folders",
]
