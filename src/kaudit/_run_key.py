"""Which run: the key the ledger files a run's records under, across its attempts."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["RunKey"]


class RunKey(NamedTuple):
    """A run's identity: its cell (model, task) within a campaign, and its index there.

    Every attempt of a run shares its key; a record is the key plus its `attempt`. A
    tuple, as `kaudit.stats.CellKey` is: keys are hashed by the thousand when a campaign
    resumes, and a key equals the plain tuple read back from the ledger's indexed columns.

    Attributes:
        campaign: The campaign name.
        model: The model (or agent) under audit.
        task: The task id, as the suite names it.
        run_index: 0-based index of the run within its cell.
    """

    campaign: str
    model: str
    task: str
    run_index: int

    @property
    def run_id(self) -> str:
        """The id the run is known by to its sandbox, its agent and a serving stack's logs."""
        return f"{self.campaign}/{self.model}/{self.task}/{self.run_index}"
