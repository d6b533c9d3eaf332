"""The ledger: append-only, hash-chained run records in an embedded SQLite file."""

from kaudit._run_key import RunKey
from kaudit.ledger._agentrelbench import ImportedRun, read_agentrelbench_verdicts, tallies_from_runs
from kaudit.ledger._anchor import GENESIS, Anchor, PastAnchorError, parse_anchor
from kaudit.ledger._export import EXPORT_FORMATS, export_rows, run_row, write_export
from kaudit.ledger._export_ledger import Exported, export_ledger
from kaudit.ledger._grades import (
    GRADE_VERSION,
    GradeChain,
    GradeRecord,
    GradeStore,
    JudgeGrade,
    read_grades,
    verify_grades,
    walk_grades,
)
from kaudit.ledger._import import (
    IMPORTED,
    export_records,
    import_files,
    import_runs,
    record_from_imported,
)
from kaudit.ledger._reader_anchor import anchor_json, reader_anchor, unanchored_grades_line
from kaudit.ledger._record import (
    RECORD_VERSION,
    RunRecord,
    RunTiming,
    suite_tasks_digest,
    usage_extra,
    usage_fields,
)
from kaudit.ledger._schema import LEDGER_FORMAT
from kaudit.ledger._sign import check_signature, generate_keypair, sign_anchor
from kaudit.ledger._snapshot import (
    Snapshot,
    ledger_head,
    open_ledger,
    read_tallies,
    verify_ledger,
)
from kaudit.ledger._spool import (
    Drained,
    RunSpooled,
    drain_ledger,
    drain_spool,
    pending_spool,
    spool_dir,
)
from kaudit.ledger._stack import STACK_DOMINATED_SHARE, StackHealth, stack_health
from kaudit.ledger._store import Ledger, canonical, migrate_ledger, record_hash
from kaudit.ledger._summary import LedgerRuns, RunSummary, read_runs, run_summaries, run_summary
from kaudit.ledger._tally import cell_key, tallies_from_records
from kaudit.ledger._verify import VerifyReport, check_anchor_signature, walk_chain

__all__ = [
    "EXPORT_FORMATS",
    "GENESIS",
    "GRADE_VERSION",
    "IMPORTED",
    "LEDGER_FORMAT",
    "RECORD_VERSION",
    "STACK_DOMINATED_SHARE",
    "Anchor",
    "Drained",
    "Exported",
    "GradeChain",
    "GradeRecord",
    "GradeStore",
    "ImportedRun",
    "JudgeGrade",
    "Ledger",
    "LedgerRuns",
    "PastAnchorError",
    "RunKey",
    "RunRecord",
    "RunSpooled",
    "RunSummary",
    "RunTiming",
    "Snapshot",
    "StackHealth",
    "VerifyReport",
    "anchor_json",
    "canonical",
    "cell_key",
    "check_anchor_signature",
    "check_signature",
    "drain_ledger",
    "drain_spool",
    "export_ledger",
    "export_records",
    "export_rows",
    "generate_keypair",
    "import_files",
    "import_runs",
    "ledger_head",
    "migrate_ledger",
    "open_ledger",
    "parse_anchor",
    "pending_spool",
    "read_agentrelbench_verdicts",
    "read_grades",
    "read_runs",
    "read_tallies",
    "reader_anchor",
    "record_from_imported",
    "record_hash",
    "run_row",
    "run_summaries",
    "run_summary",
    "sign_anchor",
    "spool_dir",
    "stack_health",
    "suite_tasks_digest",
    "tallies_from_records",
    "tallies_from_runs",
    "unanchored_grades_line",
    "usage_extra",
    "usage_fields",
    "verify_grades",
    "verify_ledger",
    "walk_chain",
    "walk_grades",
    "write_export",
]
