"""Task and damage-spec models, parsed from YAML with file/field errors."""

from kaudit.spec._damage import (
    DEFAULT_SEVERITY,
    PARAM_REFERENCE,
    SEVERITY_RANK,
    AllowRule,
    DamageSpec,
    PriceRule,
    Severity,
    bind_value,
)
from kaudit.spec._digest import task_digest
from kaudit.spec._faults import FAULT_KINDS, FaultKind, FaultRule
from kaudit.spec._identity import Identity, TableOp
from kaudit.spec._load import field_path, load_task, validate_file_data
from kaudit.spec._script import Expected, Outcome, Script, ScriptStep, SubLabel, ToolCallStep
from kaudit.spec._task import (
    VARIANT_MARK,
    Check,
    Comparison,
    Distractor,
    ExtraRows,
    Irreversibility,
    Task,
    is_number,
)
from kaudit.spec._yaml import decode_utf8, parse_yaml, read_yaml

__all__ = [
    "DEFAULT_SEVERITY",
    "FAULT_KINDS",
    "PARAM_REFERENCE",
    "SEVERITY_RANK",
    "VARIANT_MARK",
    "AllowRule",
    "Check",
    "Comparison",
    "DamageSpec",
    "Distractor",
    "Expected",
    "ExtraRows",
    "FaultKind",
    "FaultRule",
    "Identity",
    "Irreversibility",
    "Outcome",
    "PriceRule",
    "Script",
    "ScriptStep",
    "Severity",
    "SubLabel",
    "TableOp",
    "Task",
    "ToolCallStep",
    "bind_value",
    "decode_utf8",
    "field_path",
    "is_number",
    "load_task",
    "parse_yaml",
    "read_yaml",
    "task_digest",
    "validate_file_data",
]
