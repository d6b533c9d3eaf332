"""The published AgentRelBench suite, read from the installed `agentrelbench` package.

Absent data skips the tests that need it with what is missing and how to install it,
except under `CI=true`, where it fails them (`tests/stats/arb_data.py`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kaudit.suites import Suite
from kaudit.suites._agentrelbench import load_agentrelbench_suite
from kaudit.worlds.eog import EogWorld
from tests.stats.arb_data import suite_root

CSM_SEED = "data/seed-dbs/csm/db_1762232091750_3ev7dns6b.sql"
ITSM_SEED = "data/seed-dbs/itsm/db_1765301900121_3mwjj54xy.sql"


@pytest.fixture(scope="session")
def arb_root() -> Path:
    return suite_root()


@pytest.fixture(scope="session")
def arb_suite(arb_root: Path) -> Suite:
    return load_agentrelbench_suite(str(arb_root / "tasks"))


@pytest.fixture(scope="session")
def csm(arb_root: Path) -> EogWorld:
    return EogWorld.load(arb_root, "csm", arb_root / CSM_SEED)


@pytest.fixture(scope="session")
def itsm(arb_root: Path) -> EogWorld:
    return EogWorld.load(arb_root, "itsm", arb_root / ITSM_SEED)
