from __future__ import annotations

import pytest

from kaudit.ledger._agentrelbench import read_agentrelbench_verdicts, tallies_from_runs
from kaudit.stats import CellTally
from tests.stats.arb_data import dev_files


@pytest.fixture(scope="session")
def dev_pool() -> list[CellTally]:
    """The 80 cells of the AgentRelBench development pool."""
    runs = [r for m, p in dev_files().items() for r in read_agentrelbench_verdicts(p, m)]
    return tallies_from_runs(runs)
