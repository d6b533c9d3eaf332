"""The published AgentRelBench data, read from `../shared/agentrelbench/` beside the repo.

Absent data skips the tests that need it, except under `CI=true`, where it fails them:
CI must prove the suite, not silently skip it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kaudit.suites import Suite
from kaudit.suites._agentrelbench import load_agentrelbench_suite
from kaudit.worlds.eog import EogWorld

REPO = Path(__file__).resolve().parents[3]
ARB = REPO.parent / "shared" / "agentrelbench"
CSM_SEED = "data/seed-dbs/csm/db_1762232091750_3ev7dns6b.sql"
ITSM_SEED = "data/seed-dbs/itsm/db_1765301900121_3mwjj54xy.sql"


@pytest.fixture(scope="session")
def arb_root() -> Path:
    if not (ARB / "tasks").is_dir():
        reason = f"AgentRelBench data not found at {ARB} (tests read ../shared/agentrelbench)"
        if os.environ.get("CI"):  # any CI value: in CI the data must be there, never skipped
            pytest.fail(reason)
        pytest.skip(reason)
    return ARB.resolve()


@pytest.fixture(scope="session")
def arb_suite(arb_root: Path) -> Suite:
    return load_agentrelbench_suite(str(arb_root / "tasks"))


@pytest.fixture(scope="session")
def csm(arb_root: Path) -> EogWorld:
    return EogWorld.load(arb_root, "csm", arb_root / CSM_SEED)


@pytest.fixture(scope="session")
def itsm(arb_root: Path) -> EogWorld:
    return EogWorld.load(arb_root, "itsm", arb_root / ITSM_SEED)
