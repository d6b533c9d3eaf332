"""Locate the AgentRelBench reference data beside the repository, never inside it.

Tests read ``../shared/agentrelbench`` relative to the repository root. When it is absent
they skip with the reason, except under ``CI=true`` where absence is a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ROOT = REPO.parent / "shared" / "agentrelbench"

# The development pool: the 20-task k=8 breadth batch of each of four models.
DEV_FILES = {
    "llama-3.1-8b": "llama8b-merged",
    "qwen3-14b": "qwen14b-merged",
    "qwen3-32b": "qwen-merged",
    "llama-3.3-70b": "20260716T183218Z_432f84",
}


def agentrelbench_root() -> Path:
    """The data folder, or skip (fail under CI=true) when it is not there."""
    if (ROOT / "runs" / "dev").is_dir():
        return ROOT
    reason = f"AgentRelBench reference data not found at {ROOT}"
    if os.environ.get("CI"):  # any CI value: in CI the data must be there, never skipped
        pytest.fail(f"{reason}; CI=true requires it")
    pytest.skip(reason)


def dev_files() -> dict[str, Path]:
    """Model name -> verdicts.jsonl of the dev pool."""
    root = agentrelbench_root()
    return {m: root / "runs" / "dev" / d / "verdicts.jsonl" for m, d in DEV_FILES.items()}
