"""Locate the AgentRelBench reference data, never inside the repository.

Two kinds of data, found in two places:

- the suite (the 20 published tasks, their seed databases and the EOG tool data, plus
  the escalated tasks) ships inside the installed ``agentrelbench`` package, which the
  ``dev`` extra installs (``pip install -e '.[dev]'``);
- the published per-run verdicts (``runs/dev/<batch>/verdicts.jsonl``) are not in the
  package: they are read from ``$KAUDIT_AGENTRELBENCH_DATA`` when it is set, else from
  ``../shared/agentrelbench`` beside the repository.

When either is missing its tests skip with a message saying what is missing and how to
provide it, except under ``CI`` (any value), where absence fails them: CI must prove the
differential tests, not silently skip them.
"""

from __future__ import annotations

import os
from importlib.util import find_spec
from pathlib import Path
from typing import NoReturn

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA_ENV = "KAUDIT_AGENTRELBENCH_DATA"
BESIDE_REPO = REPO.parent / "shared" / "agentrelbench"

# The development pool: the 20-task k=8 breadth batch of each of four models.
DEV_FILES = {
    "llama-3.1-8b": "llama8b-merged",
    "qwen3-14b": "qwen14b-merged",
    "qwen3-32b": "qwen-merged",
    "llama-3.3-70b": "20260716T183218Z_432f84",
}


def missing(reason: str) -> NoReturn:
    """Skip with `reason`, or fail with it under CI."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so missing data fails instead of skipping)")
    pytest.skip(reason)


def suite_root() -> Path:
    """The installed package's suite folder (`tasks/`, `tasks-escalated/`, `data/`)."""
    spec = find_spec("agentrelbench")
    if spec is None or spec.origin is None:
        missing(
            "the agentrelbench package is not installed; it ships the published tasks and "
            "seed data: pip install -e '.[dev]' (or pip install agentrelbench==0.1.0)"
        )
    root = Path(spec.origin).parent / "suite"
    if not (root / "tasks").is_dir() or not (root / "data" / "seed-dbs").is_dir():
        missing(f"the installed agentrelbench package has no suite data at {root}")
    return root


def verdicts_root() -> Path:
    """The folder holding the published `runs/dev/` verdicts, from the env var or beside us."""
    configured = os.environ.get(DATA_ENV)
    root = Path(configured).expanduser() if configured else BESIDE_REPO
    if (root / "runs" / "dev").is_dir():
        return root.resolve()
    where = f"${DATA_ENV}={configured}" if configured else f"{BESIDE_REPO} ({DATA_ENV} unset)"
    missing(
        f"the published AgentRelBench verdicts (runs/dev/*/verdicts.jsonl) are not at {where}; "
        f"set {DATA_ENV} to a folder holding runs/dev/, or place it at ../shared/agentrelbench"
    )


def agentrelbench_root() -> Path:
    """The published verdicts' folder (see `verdicts_root`); kept for its callers."""
    return verdicts_root()


def dev_files() -> dict[str, Path]:
    """Model name -> verdicts.jsonl of the dev pool."""
    root = verdicts_root()
    return {m: root / "runs" / "dev" / d / "verdicts.jsonl" for m, d in DEV_FILES.items()}
