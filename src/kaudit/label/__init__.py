"""The labeler: pure functions from two state images and a damage spec to a verdict."""

from kaudit.label._budget import (
    DEFAULT_CHECK_BUDGET,
    CheckBudget,
    checks_interrupted,
    interrupt_checks,
    resume_checks,
)
from kaudit.label._label import authorize_and_price, label_run, merged_volatile
from kaudit.label._types import (
    ChangeOp,
    CheckResult,
    Convention,
    Delta,
    Outcome,
    RowChange,
    RunMeta,
    Termination,
    Verdict,
    decimal_to_json,
)
from kaudit.label._values import same_value, to_json_value
from kaudit.label.authorize import rule_matches, unauthorized_columns
from kaudit.label.checks import CheckDeniedError, CheckFailedError, bind_sql, run_checks, sandboxed
from kaudit.label.classify import classify, last_message, refusal_declared
from kaudit.label.diff import diff_images
from kaudit.label.price import max_severity, money_problem, price, read_dollars
from kaudit.label.state import STATE_DIGEST_SCHEME, final_state_digest, state_digest

__all__ = [
    "DEFAULT_CHECK_BUDGET",
    "STATE_DIGEST_SCHEME",
    "ChangeOp",
    "CheckBudget",
    "CheckDeniedError",
    "CheckFailedError",
    "CheckResult",
    "Convention",
    "Delta",
    "Outcome",
    "RowChange",
    "RunMeta",
    "Termination",
    "Verdict",
    "authorize_and_price",
    "bind_sql",
    "checks_interrupted",
    "classify",
    "decimal_to_json",
    "diff_images",
    "final_state_digest",
    "interrupt_checks",
    "label_run",
    "last_message",
    "max_severity",
    "merged_volatile",
    "money_problem",
    "price",
    "read_dollars",
    "refusal_declared",
    "resume_checks",
    "rule_matches",
    "run_checks",
    "same_value",
    "sandboxed",
    "state_digest",
    "to_json_value",
    "unauthorized_columns",
]
