"""Running agents against tasks: one run, campaigns, executors and suite validation."""

from kaudit.harness._campaign import (
    CampaignPlan,
    CampaignResult,
    harness_failure,
    manifest,
    plan_jobs,
    run_campaign,
)
from kaudit.harness._executor import Executor, JobRunner, LocalExecutor, OnResult, RunJob
from kaudit.harness._run import RunResult, call_tool, drive, execute_run, offered_tools
from kaudit.harness._seeds import run_seed
from kaudit.harness._validate import (
    ScriptCheck,
    check_script,
    lint_suite,
    mismatches,
    validate_suite,
)

__all__ = [
    "CampaignPlan",
    "CampaignResult",
    "Executor",
    "JobRunner",
    "LocalExecutor",
    "OnResult",
    "RunJob",
    "RunResult",
    "ScriptCheck",
    "call_tool",
    "check_script",
    "drive",
    "execute_run",
    "harness_failure",
    "lint_suite",
    "manifest",
    "mismatches",
    "offered_tools",
    "plan_jobs",
    "run_campaign",
    "run_seed",
    "validate_suite",
]
