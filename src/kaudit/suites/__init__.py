"""Built-in task suites and the loader for suites on disk or from other formats."""

from kaudit.suites._referee import Referee
from kaudit.suites._suite import (
    Suite,
    SuiteLoader,
    load_suite,
    load_yaml_suite,
    register_suite_loader,
)
from kaudit.suites._summary import task_prompts, task_summaries
from kaudit.suites._variants import distractor_variant, lookalike

__all__ = [
    "Referee",
    "Suite",
    "SuiteLoader",
    "distractor_variant",
    "load_suite",
    "load_yaml_suite",
    "lookalike",
    "register_suite_loader",
    "task_prompts",
    "task_summaries",
]
