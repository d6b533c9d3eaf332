"""Running agents against tasks: one run, campaigns, executors and suite validation.

`RayExecutor` imports Ray only when it runs, so kaudit works without Ray installed.
"""

from kaudit.harness._campaign import (
    CampaignPlan,
    CampaignResult,
    CampaignRunner,
    RunWork,
    harness_failure,
    manifest,
    plan_jobs,
    run_campaign,
    with_agent_facts,
)
from kaudit.harness._executor import Executor, JobRunner, LocalExecutor, OnResult, RunJob
from kaudit.harness._ray import RayExecutor
from kaudit.harness._run import RunResult, call_tool, drive, execute_run, offered_tools
from kaudit.harness._seeds import run_seed
from kaudit.harness._sequential import CellCounts, StoppingRule, fixed_rule
from kaudit.harness._validate import (
    VALIDATE_CAMPAIGN,
    ScriptCheck,
    check_script,
    lint_suite,
    mismatches,
    validate_suite,
)

__all__ = [
    "VALIDATE_CAMPAIGN",
    "CampaignPlan",
    "CampaignResult",
    "CampaignRunner",
    "CellCounts",
    "Executor",
    "JobRunner",
    "LocalExecutor",
    "OnResult",
    "RayExecutor",
    "RunJob",
    "RunResult",
    "RunWork",
    "ScriptCheck",
    "StoppingRule",
    "call_tool",
    "check_script",
    "drive",
    "execute_run",
    "fixed_rule",
    "harness_failure",
    "lint_suite",
    "manifest",
    "mismatches",
    "offered_tools",
    "plan_jobs",
    "run_campaign",
    "run_seed",
    "validate_suite",
    "with_agent_facts",
]
