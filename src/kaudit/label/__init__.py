"""The labeler: pure functions from two state images and a damage spec to a verdict."""

from kaudit.label._budget import CheckBudget
from kaudit.label._label import label_run
from kaudit.label._types import RunMeta, Verdict
from kaudit.label.checks import CheckDeniedError, CheckFailedError
from kaudit.label.classify import refusal_declared
from kaudit.label.price import price
from kaudit.label.state import final_state_digest

__all__ = [
    "CheckBudget",
    "CheckDeniedError",
    "CheckFailedError",
    "RunMeta",
    "Verdict",
    "final_state_digest",
    "label_run",
    "price",
    "refusal_declared",
]
