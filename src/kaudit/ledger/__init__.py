"""The ledger: append-only, hash-chained run records in an embedded SQLite file."""

from kaudit._run_key import RunKey
from kaudit.ledger._anchor import Anchor, PastAnchorError
from kaudit.ledger._export import write_export
from kaudit.ledger._export_ledger import Exported
from kaudit.ledger._grades import GradeRecord
from kaudit.ledger._import import import_files
from kaudit.ledger._record import RunRecord, suite_tasks_digest, usage_extra, usage_fields
from kaudit.ledger._snapshot import Snapshot, ledger_head, open_ledger, verify_ledger
from kaudit.ledger._spool import RunSpooled
from kaudit.ledger._store import Ledger, canonical, record_hash
from kaudit.ledger._summary import read_runs
from kaudit.ledger._tally import cell_key
from kaudit.ledger._verify import walk_chain

__all__ = [
    "Anchor",
    "Exported",
    "GradeRecord",
    "Ledger",
    "PastAnchorError",
    "RunKey",
    "RunRecord",
    "RunSpooled",
    "Snapshot",
    "canonical",
    "cell_key",
    "import_files",
    "ledger_head",
    "open_ledger",
    "read_runs",
    "record_hash",
    "suite_tasks_digest",
    "usage_extra",
    "usage_fields",
    "verify_ledger",
    "walk_chain",
    "write_export",
]
