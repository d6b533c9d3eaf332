"""Built-in task suites and the loader for suites on disk or from other formats."""

from kaudit.suites._conform import check_identity
from kaudit.suites._lint import LintFinding, lint_task
from kaudit.suites._referee import Referee
from kaudit.suites._suite import (
    BUILTIN_DIR,
    ENTRY_POINT_GROUP,
    SUITE_LOADERS,
    Suite,
    SuiteLoader,
    load_suite,
    load_yaml_suite,
    register_suite_loader,
)
from kaudit.suites._summary import task_prompts, task_summaries, task_summary
from kaudit.suites._variants import (
    VARIANT_SUFFIX,
    clone_rows,
    distractor_variant,
    lookalike,
    with_extra_rows,
)

__all__ = [
    "BUILTIN_DIR",
    "ENTRY_POINT_GROUP",
    "SUITE_LOADERS",
    "VARIANT_SUFFIX",
    "LintFinding",
    "Referee",
    "Suite",
    "SuiteLoader",
    "check_identity",
    "clone_rows",
    "distractor_variant",
    "lint_task",
    "load_suite",
    "load_yaml_suite",
    "lookalike",
    "register_suite_loader",
    "task_prompts",
    "task_summaries",
    "task_summary",
    "with_extra_rows",
]
