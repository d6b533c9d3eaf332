"""What a run is put under beyond its task: campaign faults and a boundary identity.

A campaign (`CampaignPlan`) and a served run (`kaudit.serve.ServeOptions`) take the
same two conditions, read the same way from the same inputs, and pin them alike in the
ledger, so one type holds them and one function reads them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaudit.faults._parse import parse_faults
from kaudit.spec import FaultRule, Identity, Task, read_yaml, task_digest
from kaudit.spec._load import validate_file_data
from kaudit.suites import Suite
from kaudit.suites._conform import check_identity

IDENTITY_ARGUMENT = Path("<identity>")
"""What an error names when the identity was given as an object, not read from a file."""


@dataclass(frozen=True)
class RunConditions:
    """Faults added to every task's own (seeded from the run seed), and an identity.

    The identity is the boundary of tasks that declare none. Runs under other
    conditions measure something else: another cell, another campaign config.
    """

    faults: tuple[FaultRule, ...] = ()
    identity: Identity | None = None

    def digest(self, task: Task) -> str:
        """The digest of what a run of `task` measures (`run_digest`)."""
        return run_digest(task, self.faults, self.identity)

    def pinned(self) -> dict[str, Any]:
        """The conditions as a campaign config pins them, empty ones included."""
        return {
            "faults": [rule.model_dump(mode="json") for rule in self.faults],
            "identity": None if self.identity is None else self.identity.model_dump(mode="json"),
        }


NO_CONDITIONS = RunConditions()
"""No campaign faults, no identity: every task runs as it declares itself."""


def run_digest(task: Task, faults: Sequence[FaultRule], identity: Identity | None) -> str:
    """The digest of what a run measures: the task, plus the campaign's faults and identity.

    Runs of one task under other campaign faults or another identity measure something
    else, so they are another cell; without either the digest is the task's own.
    """
    base = task_digest(task)
    if not faults and identity is None:
        return base
    extra = RunConditions(tuple(faults), identity).pinned()
    text = base + "\n" + json.dumps(extra, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def load_identity(path: Path) -> Identity:
    """An identity file, with errors naming the file and the field."""
    return validate_file_data(Identity, read_yaml(path), path)


def run_conditions(
    suite: Suite,
    tasks: Sequence[Task],
    faults: str | Sequence[FaultRule] | None = None,
    identity: str | Path | Identity | None = None,
) -> RunConditions:
    """The conditions from `--faults` text (or rules) and an identity file (or object).

    The identity is checked against the world of every task that would use it, so a
    table or column the world lacks is refused before any run (`SpecError` naming the
    file and the field); a bad fault item raises `KauditError` naming it.
    """
    rules = parse_faults(faults) if isinstance(faults, str) else tuple(faults or ())
    if identity is None:
        return RunConditions(rules)
    if isinstance(identity, Identity):
        bounded, source = identity, IDENTITY_ARGUMENT
    else:
        source = Path(identity)
        bounded = load_identity(source)
    check_identity(bounded, source, tasks, suite.initial_image)
    return RunConditions(rules, bounded)
