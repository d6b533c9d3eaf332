"""numpy and scipy, each loaded with its OpenBLAS limited to one thread.

numpy and scipy each bring their own OpenBLAS, and each starts a worker thread per core
when it loads; the workers spin while they wait for work. kaudit's numerics are a few
thousand numbers (bootstrap weights, one likelihood per cell), far too small for a
second BLAS thread to help, while on a two-core machine the spinning workers take the
second core from the ledger read: about 0.1 s of a 1.2 s `kaudit report` of a
10,000-run ledger (alternating runs with and without `OPENBLAS_NUM_THREADS=1`; the
printed numbers are identical).

A thread count the user set (`OPENBLAS_NUM_THREADS`, `GOTO_NUM_THREADS`,
`OMP_NUM_THREADS`) is kept, and the variable is removed again once the library is
loaded, so processes kaudit starts (external agents, servers) inherit the environment
unchanged.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from types import ModuleType
from typing import Any

__all__ = ["import_single_threaded", "special"]

_SETTINGS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
_LOCK = threading.Lock()  # the variable is process-wide; two first imports must not race


def import_single_threaded(name: str) -> ModuleType:
    """`name` imported, with any OpenBLAS it loads now limited to one thread."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    with _LOCK:
        if name in sys.modules or any(setting in os.environ for setting in _SETTINGS):
            return importlib.import_module(name)
        os.environ["OPENBLAS_NUM_THREADS"] = "1"  # read by OpenBLAS when its library loads
        try:
            return importlib.import_module(name)
        finally:
            del os.environ["OPENBLAS_NUM_THREADS"]


class _Special:
    """`scipy.special`, imported when a function of it is first used.

    Importing it costs about 0.25 s (most of it scipy's array-API layer). `kaudit report
    --html` forks the process that builds the run viewer before any statistic is
    computed, so the import then runs beside that process instead of delaying its start,
    and commands that compute no interval never pay it.
    """

    def __getattr__(self, name: str) -> Any:
        value = getattr(import_single_threaded("scipy.special"), name)
        setattr(self, name, value)  # later uses are a plain attribute read
        return value


special = _Special()
"""Use as the module: ``special.betaincinv(a, b, q)``."""
