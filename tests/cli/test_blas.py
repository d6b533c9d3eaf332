"""The CLI loads numpy's and scipy's OpenBLAS with one thread each, and leaks no setting."""

from __future__ import annotations

import os
import subprocess
import sys

THREADS = (
    "import os, sys, kaudit.cli.main; "
    "lazy = 'scipy.special' not in sys.modules; "
    "from kaudit.stats import clopper_pearson; clopper_pearson(1, 3); "
    "print(len(os.listdir('/proc/self/task')), os.environ.get('OPENBLAS_NUM_THREADS'), lazy)"
)


def run(env: dict[str, str]) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    done = subprocess.run(
        [sys.executable, "-c", THREADS], env=clean | env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_the_cli_process_runs_one_thread_and_leaves_no_variable() -> None:
    """Fails if numpy loads before `kaudit.cli._blas` or scipy.special without
    `kaudit._blas` (each OpenBLAS then starts a spinning worker per core: 3 threads on a
    2-core machine), if the variable is left for the processes kaudit starts, or if the
    CLI imports scipy.special before a statistic needs it (a `report --html` then forks
    its viewer process 0.25 s later). On a one-core machine OpenBLAS starts no worker."""
    assert run({}) == "1 None True"


def test_a_thread_count_the_user_set_is_kept() -> None:
    """Fails if the CLI overrode an explicit OPENBLAS_NUM_THREADS (one thread again)."""
    threads, value, _ = run({"OPENBLAS_NUM_THREADS": "2"}).split()
    assert value == "2"
    assert int(threads) > 1 or (os.cpu_count() or 1) < 2
