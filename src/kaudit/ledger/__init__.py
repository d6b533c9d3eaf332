"""The ledger: append-only, hash-chained run records in an embedded SQLite file."""

from kaudit.ledger._agentrelbench import ImportedRun, read_agentrelbench_verdicts, tallies_from_runs
from kaudit.ledger._export import EXPORT_FORMATS, export_rows, run_row, write_export
from kaudit.ledger._import import IMPORTED, export_records, import_runs, record_from_imported
from kaudit.ledger._record import RECORD_VERSION, RunRecord, RunTiming
from kaudit.ledger._store import GENESIS, Ledger, RunKey, canonical, record_hash
from kaudit.ledger._tally import read_tallies, tallies_from_records

__all__ = [
    "EXPORT_FORMATS",
    "GENESIS",
    "IMPORTED",
    "RECORD_VERSION",
    "ImportedRun",
    "Ledger",
    "RunKey",
    "RunRecord",
    "RunTiming",
    "canonical",
    "export_records",
    "export_rows",
    "import_runs",
    "read_agentrelbench_verdicts",
    "read_tallies",
    "record_from_imported",
    "record_hash",
    "run_row",
    "tallies_from_records",
    "tallies_from_runs",
    "write_export",
]
