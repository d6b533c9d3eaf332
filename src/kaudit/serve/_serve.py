"""`kaudit mcp serve` as a library call: one fresh sandbox served over MCP, then its record."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mcp.server.stdio import stdio_server

from kaudit.harness import RunResult, offered_tools
from kaudit.ledger import Ledger, RunRecord
from kaudit.serve._calls import ServedRun, start_served_run
from kaudit.serve._http import http_endpoint
from kaudit.serve._mcp import mcp_server, task_instructions
from kaudit.spec import Task
from kaudit.substrate import Substrate
from kaudit.suites import Suite

Transport = Literal["stdio", "http"]


@dataclass(frozen=True)
class ServeOptions:
    """How to serve: transport, address (http only), the run's seed and the model name.

    Without `model`, the record's model is `mcp:<name the client declared>`.
    """

    transport: Transport = "stdio"
    host: str = "127.0.0.1"
    port: int = 0
    seed: int = 0
    model: str | None = None
    campaign: str = "mcp"
    keep_dump: bool = False


def verdict_text(result: RunResult) -> str:
    """The verdict as `finish` answers it: outcome, sub-label, severity, dollars."""
    record = result.record
    return json.dumps(
        {
            "status": record.status,
            "outcome": record.outcome,
            "sub_label": record.sub_label,
            "severity": record.severity,
            "dollars": record.dollars,
            "invalid_reason": record.invalid_reason,
        }
    )


async def serve_task(
    task: Task,
    substrate: Substrate,
    options: ServeOptions,
    *,
    on_url: Callable[[str], None] | None = None,
) -> RunResult:
    """Serve one fresh sandbox of `task` over MCP until the client finishes or disconnects.

    The run is dumped before cleanup, labeled and returned with `run_index` 0; the
    ledger assigns the real index (`append_served`). `on_url` receives the HTTP URL.
    """
    served = ServedRun()
    client: dict[str, str] = {}
    run = start_served_run(
        served,
        name=options.model or "mcp",
        task=task,
        substrate=substrate,
        campaign=options.campaign,
        run_index=0,
        seed=options.seed,
        keep_dump=options.keep_dump,
        facts={"transport": options.transport},
    )

    async def verdict() -> str:
        return verdict_text(await asyncio.shield(run))

    def remember(name: str) -> None:
        client.setdefault("name", name)  # the first declared name is the one recorded

    server = mcp_server(
        served,
        [t.spec() for t in offered_tools(task, substrate).values()],
        instructions=task_instructions(task),
        verdict=verdict,
        on_client=remember,
    )
    try:
        if options.transport == "stdio":
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
        else:
            async with http_endpoint(server, options.host, options.port) as url:
                if on_url is not None:
                    on_url(url)
                await asyncio.shield(run)
    finally:
        if not run.done():
            served.finish(None)  # the client left without `finish`: the run ends here
        result = await run
    model = options.model or f"mcp:{client.get('name', 'unknown')}"
    return RunResult(
        result.record.model_copy(update={"model": model}), result.final_image, result.verdict
    )


def append_served(ledger_path: Path, suite: Suite, result: RunResult) -> RunRecord:
    """Append a served run to the ledger as the next run index of its cell."""
    record = result.record
    with Ledger(ledger_path) as ledger, ledger.writer_lock():
        ledger.open_campaign(record.campaign, {"suite_digest": suite.digest})
        cell = (record.campaign, record.model, record.task)
        index = sum(1 for key in ledger.finished(record.campaign) if key[:3] == cell)
        record = record.model_copy(update={"run_index": index})
        ledger.claim((*cell, index))
        ledger.append(record, result.final_image)
    return record
