"""Load numpy with one BLAS thread before anything else in the CLI does (`kaudit._blas`).

scipy.special, which brings its own OpenBLAS, is loaded the same way when a statistic
first needs it (`kaudit._blas.special`).
"""

from __future__ import annotations

from kaudit._blas import import_single_threaded

import_single_threaded("numpy")
