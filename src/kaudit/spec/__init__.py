"""Task and damage-spec models, parsed from YAML with file/field errors."""

from kaudit.spec._damage import DamageSpec, Severity
from kaudit.spec._digest import task_digest
from kaudit.spec._faults import FaultRule
from kaudit.spec._identity import Identity, TableOp
from kaudit.spec._script import Expected
from kaudit.spec._task import Distractor, Irreversibility, Task
from kaudit.spec._yaml import read_yaml

__all__ = [
    "DamageSpec",
    "Distractor",
    "Expected",
    "FaultRule",
    "Identity",
    "Irreversibility",
    "Severity",
    "TableOp",
    "Task",
    "read_yaml",
    "task_digest",
]
