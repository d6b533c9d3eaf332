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
)
from kaudit.harness._choose import (
    EXECUTORS,
    ExecutorFactory,
    ExecutorSettings,
    build_executor,
    register_executor,
)
from kaudit.harness._conditions import (
    NO_CONDITIONS,
    RunConditions,
    load_identity,
    run_conditions,
    run_digest,
)
from kaudit.harness._executor import Executor, JobRunner, LocalExecutor, OnResult, RunJob
from kaudit.harness._gateway import RunGateway, build_gateway
from kaudit.harness._ray import RayExecutor, RayStats
from kaudit.harness._run import (
    AgentLoop,
    Driver,
    Labeled,
    RecordParts,
    RunRequest,
    RunResult,
    Transcript,
    dump,
    invalid_result,
    label,
    offered_tools,
    record,
    run_pipeline,
    seed,
)
from kaudit.harness._seeds import run_seed
from kaudit.harness._sequential import CellCounts, StoppingRule, fixed_rule
from kaudit.harness._validate import (
    VALIDATE_CAMPAIGN,
    ScriptCheck,
    SuiteValidation,
    check_script,
    lint_suite,
    mismatches,
    suite_validation,
    validate_suite,
)
from kaudit.harness._world import handed_world, hands_over, reaches_world
from kaudit.harness._world_preflight import (
    PREFLIGHT_CAMPAIGN,
    WorldPreflight,
    how_reached,
    preflight_world_agent,
    preflight_world_agents,
    refuse_unenforced_identity,
)

__all__ = [
    "EXECUTORS",
    "NO_CONDITIONS",
    "PREFLIGHT_CAMPAIGN",
    "VALIDATE_CAMPAIGN",
    "AgentLoop",
    "CampaignPlan",
    "CampaignResult",
    "CampaignRunner",
    "CellCounts",
    "Driver",
    "Executor",
    "ExecutorFactory",
    "ExecutorSettings",
    "JobRunner",
    "Labeled",
    "LocalExecutor",
    "OnResult",
    "RayExecutor",
    "RayStats",
    "RecordParts",
    "RunConditions",
    "RunGateway",
    "RunJob",
    "RunRequest",
    "RunResult",
    "RunWork",
    "ScriptCheck",
    "StoppingRule",
    "SuiteValidation",
    "Transcript",
    "WorldPreflight",
    "build_executor",
    "build_gateway",
    "check_script",
    "dump",
    "fixed_rule",
    "handed_world",
    "hands_over",
    "harness_failure",
    "how_reached",
    "invalid_result",
    "label",
    "lint_suite",
    "load_identity",
    "manifest",
    "mismatches",
    "offered_tools",
    "plan_jobs",
    "preflight_world_agent",
    "preflight_world_agents",
    "reaches_world",
    "record",
    "refuse_unenforced_identity",
    "register_executor",
    "run_campaign",
    "run_conditions",
    "run_digest",
    "run_pipeline",
    "run_seed",
    "seed",
    "suite_validation",
    "validate_suite",
]
