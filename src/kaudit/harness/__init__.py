"""Running agents against tasks: one run, campaigns, executors and suite validation.

`RayExecutor` imports Ray only when it runs, so kaudit works without Ray installed.
"""

from kaudit.harness._campaign import CampaignPlan, CampaignRunner, RunWork, manifest, run_campaign
from kaudit.harness._choose import ExecutorFactory, ExecutorSettings, register_executor
from kaudit.harness._conditions import RunConditions, run_conditions
from kaudit.harness._executor import Executor, JobRunner, OnResult, RunJob
from kaudit.harness._gateway import build_gateway
from kaudit.harness._run import (
    AgentLoop,
    Driver,
    Labeled,
    RunRequest,
    RunResult,
    Transcript,
    dump,
    invalid_result,
    label,
    record,
    run_pipeline,
    seed,
)
from kaudit.harness._sequential import StoppingRule
from kaudit.harness._validate import ScriptCheck, SuiteValidation, mismatches
from kaudit.harness._world import HandOver

__all__ = [
    "AgentLoop",
    "CampaignPlan",
    "CampaignRunner",
    "Driver",
    "Executor",
    "ExecutorFactory",
    "ExecutorSettings",
    "HandOver",
    "JobRunner",
    "Labeled",
    "OnResult",
    "RunConditions",
    "RunJob",
    "RunRequest",
    "RunResult",
    "RunWork",
    "ScriptCheck",
    "StoppingRule",
    "SuiteValidation",
    "Transcript",
    "build_gateway",
    "dump",
    "invalid_result",
    "label",
    "manifest",
    "mismatches",
    "record",
    "register_executor",
    "run_campaign",
    "run_conditions",
    "run_pipeline",
    "seed",
]
