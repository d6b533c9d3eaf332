"""Load numpy and scipy with one BLAS thread each, before anything else in the CLI does.

numpy and scipy each bring their own OpenBLAS, and each starts a worker thread per core
when it loads; the workers spin while they wait for work. kaudit's numerics are a few
thousand numbers (bootstrap weights, one likelihood per cell), far too small for a
second BLAS thread to help, while on a two-core machine the spinning workers take the
second core from the ledger read: about 0.1 s of a 1.2 s `kaudit report` of a
10,000-run ledger (alternating runs with and without `OPENBLAS_NUM_THREADS=1`; the
printed numbers are identical).

A thread count the user set (`OPENBLAS_NUM_THREADS`, `GOTO_NUM_THREADS`,
`OMP_NUM_THREADS`) is kept, and the variable is removed again once both libraries are
loaded, so processes kaudit starts (external agents, servers) inherit the environment
unchanged. Every command imports both anyway (the ledger package needs the statistics).
"""

from __future__ import annotations

import importlib
import os
import sys

_SETTINGS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
_BLAS_USERS = ("numpy", "scipy.special")
"""The first modules that load each library's OpenBLAS (numpy's, then scipy's own)."""


def load_blas_single_threaded() -> None:
    """Import numpy and scipy.special with OpenBLAS limited to one thread.

    Does nothing when either is already imported (its threads exist) or the user set a
    thread count.
    """
    if any(name in sys.modules for name in _BLAS_USERS) or any(
        name in os.environ for name in _SETTINGS
    ):
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"  # read by OpenBLAS when its library loads
    try:
        for name in _BLAS_USERS:
            importlib.import_module(name)
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]


load_blas_single_threaded()
