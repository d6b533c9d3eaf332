"""kaudit: audit action-taking LLM agents by the damage they leave in real state.

The public API, what a notebook or a CI job imports:

    result = kaudit.audit("builtin", ["reference"], k=4, ledger="audit.sqlite")
    report = kaudit.read("audit.sqlite")           # or result.report()
    with kaudit.open("audit.sqlite", head="audit.head.json") as ledger:  # one verified read
        report, decision = kaudit.read(ledger), kaudit.decide(ledger, "propose")
    pooled = kaudit.summarize(["audit.sqlite"])    # pass^k, safe^k, miss rates, ICC
    decision = kaudit.decide("audit.sqlite", "autonomous_write")
    watched = kaudit.compare("audit.sqlite", "events.jsonl", threshold=0.2)
    kaudit.validate("builtin")                     # a suite against its own scripts
    needed = kaudit.plan(0.1, detect=0.95)       # runs to see damage of rate 0.1
    kaudit.serve_run("billing/invoice-delete-drafts", ledger="mcp.sqlite")  # one MCP run
    kaudit.export("audit.sqlite", "parquet", "runs.parquet")
    kaudit.judge("audit.sqlite", "openai:gpt-4o-mini")  # an LLM judge beside the state

Two value types travel through all of it: `RunKey` names a run (campaign, model, task,
run index) and `Usage` says what its model calls cost (tokens, dollars, calls, retries,
time); a run record gives both back as `record.key` and `record.usage`.

`decide` is the release gate, `compare` the deployment monitor, `summarize` the pool
statistics and `judge` the LLM grader; they are not named `gate`, `monitor`, `stats` and
`grade` because those are the subpackages holding them (nor is `serve_run` named `serve`).
Each name is imported on first use, so `import kaudit` stays cheap for the CLI.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from kaudit._version import __version__ as __version__

if TYPE_CHECKING:
    from kaudit._audit import AuditHooks, AuditResult, audit
    from kaudit._plan import AuditPlan, plan
    from kaudit._run_key import RunKey
    from kaudit._serve_run import serve_run
    from kaudit._usage import Usage
    from kaudit.gate._ledger import gate_ledger as decide
    from kaudit.grade._call import judge_ledger as judge
    from kaudit.harness._validate import suite_validation as validate
    from kaudit.ledger import Snapshot
    from kaudit.ledger import open_ledger as open
    from kaudit.ledger._export_ledger import export_ledger as export
    from kaudit.monitor._compare import compare_events as compare
    from kaudit.report import Report
    from kaudit.report._read import read_report as read
    from kaudit.report._stats_report import summarize_sources as summarize

__all__ = [
    "AuditHooks",
    "AuditPlan",
    "AuditResult",
    "Report",
    "RunKey",
    "Snapshot",
    "Usage",
    "audit",
    "compare",
    "decide",
    "export",
    "judge",
    "open",
    "plan",
    "read",
    "serve_run",
    "summarize",
    "validate",
]

_LAZY = {
    "AuditHooks": ("kaudit._audit", "AuditHooks"),
    "AuditResult": ("kaudit._audit", "AuditResult"),
    "audit": ("kaudit._audit", "audit"),
    "Report": ("kaudit.report", "Report"),
    "read": ("kaudit.report._read", "read_report"),
    "open": ("kaudit.ledger", "open_ledger"),
    "Snapshot": ("kaudit.ledger", "Snapshot"),
    "summarize": ("kaudit.report._stats_report", "summarize_sources"),
    "decide": ("kaudit.gate._ledger", "gate_ledger"),
    "compare": ("kaudit.monitor._compare", "compare_events"),
    "validate": ("kaudit.harness._validate", "suite_validation"),
    "export": ("kaudit.ledger._export_ledger", "export_ledger"),
    "judge": ("kaudit.grade._call", "judge_ledger"),
    "serve_run": ("kaudit._serve_run", "serve_run"),
    "plan": ("kaudit._plan", "plan"),
    "AuditPlan": ("kaudit._plan", "AuditPlan"),
    "RunKey": ("kaudit._run_key", "RunKey"),
    "Usage": ("kaudit._usage", "Usage"),
}


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module 'kaudit' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
