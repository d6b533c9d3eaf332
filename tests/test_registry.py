"""The one generic registry behind worlds, agents, suite loaders, substrates and executors."""

from __future__ import annotations

import pytest

from kaudit.agents._registry import AGENTS
from kaudit.errors import SubstrateError, SuiteError
from kaudit.harness._choose import EXECUTORS
from kaudit.registry import Registry
from kaudit.substrate._choice import SUBSTRATES
from kaudit.suites._suite import SUITE_LOADERS
from kaudit.worlds._world import WORLDS


def test_decorated_factories_are_found_and_unknown_names_list_the_known() -> None:
    """Bug caught: a registration lost, or an unknown name raising a bare KeyError."""
    registry: Registry[int] = Registry("thing", "kaudit.tests.no-such-group", error=SuiteError)
    registry.register("one")(1)
    assert registry.get("one") == 1 and registry.find("two") is None
    with pytest.raises(SuiteError, match=r"unknown thing 'two'; known: \['one'\]"):
        registry.get("two")


def test_builtins_are_imported_on_first_miss_and_missing_modules_ignored() -> None:
    """Bug caught: a built-in never registered until imported by hand, or a missing optional
    module (an extra that is not installed) breaking every lookup."""
    registry: Registry[str] = Registry(
        "thing", "kaudit.tests.no-such-group", builtins=("kaudit_no_such_module",)
    )
    assert registry.names() == []


def test_every_extension_point_uses_it() -> None:
    """Bug caught: one of the five extension points keeps a registry of its own."""
    assert {"enterprise"} <= set(WORLDS.names())
    assert {"reference", "scripted", "openai", "anthropic"} <= set(AGENTS.names())
    assert {"agentrelbench", "world"} <= set(SUITE_LOADERS.names())
    assert SUBSTRATES.names() == ["postgresql", "sqlite"]
    assert EXECUTORS.names() == ["local", "ray"]
    with pytest.raises(SubstrateError, match="unknown substrate 'mysql'"):
        SUBSTRATES.get("mysql")
