"""Built-in task suites and the loader for suites on disk or from other formats."""

from kaudit.suites._suite import (
    BUILTIN_DIR,
    Suite,
    SuiteLoader,
    load_suite,
    load_yaml_suite,
    register_suite_loader,
)

__all__ = [
    "BUILTIN_DIR",
    "Suite",
    "SuiteLoader",
    "load_suite",
    "load_yaml_suite",
    "register_suite_loader",
]
