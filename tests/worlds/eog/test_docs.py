"""docs/agentrelbench.md lists every emulated tool with the shape, table and tag it has."""

from __future__ import annotations

import re

import pytest

from kaudit.suites import Suite
from kaudit.worlds.eog import EogWorld
from tests.stats.arb_data import REPO

pytestmark = pytest.mark.agentrelbench

ROW = re.compile(r"^\| `(\w+)` \| (\w+) \| (\w+) \| `(\w+)` \| (\w+) \|", re.MULTILINE)


def test_the_tool_table_matches_the_emulation(
    arb_suite: Suite, csm: EogWorld, itsm: EogWorld
) -> None:
    documented = {
        m[0]: m[1:] for m in ROW.findall((REPO / "docs" / "agentrelbench.md").read_text())
    }
    worlds = {"csm": csm, "itsm": itsm}
    selected = {(t.vertical, name) for t in arb_suite.tasks.values() for name in t.tools}
    assert {name for _, name in selected} == set(documented)
    for domain, name in selected:
        plan = worlds[domain].plan(name)
        assert documented[name] == (domain, plan.shape, plan.table, plan.tag), name
