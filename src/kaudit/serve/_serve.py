"""`kaudit mcp serve` as a library call: one fresh sandbox served over MCP, then its record."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mcp.server.lowlevel import Server

from kaudit._require import require_seconds
from kaudit.errors import LedgerError
from kaudit.harness import CampaignPlan, RunConditions, RunResult
from kaudit.harness._conditions import NO_CONDITIONS
from kaudit.harness._run import offered_tools
from kaudit.ledger import Ledger, RunRecord, walk_chain
from kaudit.ledger._spool import RunSpooled, drain_spool, open_for_append, spool_run
from kaudit.serve._calls import Recorded, ServedRun, start_served_run
from kaudit.serve._http import http_endpoint
from kaudit.serve._mcp import mcp_server, task_instructions
from kaudit.serve._stdio import serve_stdio
from kaudit.serve._timeouts import IDLE_TIMEOUT_S, end_when_idle
from kaudit.spec import Task
from kaudit.substrate import Substrate
from kaudit.suites import Suite

Transport = Literal["stdio", "http"]
LINGER_S = 5.0
"""How long a stdio client may stay connected after its run is over before serving stops."""
LOCK_WAIT_S = 30.0
"""How long a served run waits for another writer of its ledger before it stays spooled."""


@dataclass(frozen=True)
class ServeOptions:
    """How to serve: transport, address (http only), the run's seed and the model name.

    Without `model`, the record's model is `mcp:<name the client declared>`.
    `conditions` are a campaign's (`kaudit.harness.RunConditions`, the same type
    `CampaignPlan` holds): faults added to the task's own, seeded from `seed`; an
    identity for a task that declares none. After `idle_timeout_s` seconds without a
    call the run ends `stalled`.
    """

    transport: Transport = "stdio"
    host: str = "127.0.0.1"
    port: int = 0
    seed: int = 0
    model: str | None = None
    campaign: str = "mcp"
    keep_dump: bool = False
    conditions: RunConditions = NO_CONDITIONS
    idle_timeout_s: float = IDLE_TIMEOUT_S

    def __post_init__(self) -> None:
        require_seconds("idle_timeout_s", self.idle_timeout_s)

    def applied(self, substrate: Substrate) -> dict[str, Any]:
        """What the record keeps of how it was served (`extra["served"]`)."""
        return (
            {"transport": self.transport, "substrate": type(substrate).__name__}
            | self.conditions.pinned()
            | {"idle_timeout_s": self.idle_timeout_s}
        )


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
    on_result: Callable[[RunResult], None] | None = None,
) -> RunResult:
    """Serve one fresh sandbox of `task` over MCP until the client finishes, leaves or idles.

    The run is dumped before cleanup, labeled and returned with `run_index` 0; the
    ledger assigns the real index (`append_served`). `on_url` receives the HTTP URL;
    `on_result` gets the result as soon as the run is over, before the transport winds
    down, so an interrupt while the client hangs up loses no finished run.
    """
    served = ServedRun()
    client: dict[str, str] = {}
    run = start_served_run(
        served,
        # A name no other serve uses: the run id names the sandbox (a PostgreSQL database),
        # so two serves of one task at once must not share it. The record gets the real name.
        name=f"served-{uuid.uuid4().hex[:12]}",
        task=task,
        substrate=substrate,
        campaign=options.campaign,
        run_index=0,
        seed=options.seed,
        keep_dump=options.keep_dump,
        conditions=options.conditions,
        recorded=Recorded(
            model=lambda: options.model or f"mcp:{client.get('name', 'unknown')}",
            task_digest=options.conditions.digest(task),
            world_digest=substrate.template_digest,
            extra={"served": options.applied(substrate)},
        ),
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
        on_activity=served.touch,
    )
    idle = asyncio.create_task(end_when_idle(served, options.idle_timeout_s))
    transport = asyncio.create_task(_transport(server, options, on_url))
    try:
        await asyncio.wait({transport, run}, return_when=asyncio.FIRST_COMPLETED)
        if transport.done():
            transport.result()  # a transport that failed (a port in use) is an error, not a run
            served.finish(None)  # the client left without `finish`: the run ends here
        result = await run
        if on_result is not None:
            on_result(result)
        await _wind_down(transport, LINGER_S if options.transport == "stdio" else 0.0)
    finally:
        idle.cancel()
        for pending in (transport, run):
            pending.cancel()  # after an error or an interrupt: nothing stays half served
        await asyncio.gather(transport, run, idle, return_exceptions=True)
    return result


async def _transport(
    server: Server[Any], options: ServeOptions, on_url: Callable[[str], None] | None
) -> None:
    """Serve until the client leaves (stdio) or until cancelled."""
    if options.transport == "stdio":
        await serve_stdio(server)
        return
    async with http_endpoint(server, options.host, options.port) as url:
        if on_url is not None:
            on_url(url)
        await asyncio.Event().wait()  # an HTTP client's leaving is not seen: the run decides


async def _wind_down(transport: asyncio.Task[None], linger_s: float) -> None:
    """Give a stdio client `linger_s` to read its last reply and hang up, then stop serving.

    HTTP needs no linger: stopping uvicorn lets requests in flight (`finish`) complete.
    """
    if not transport.done() and linger_s > 0:
        await asyncio.wait({transport}, timeout=linger_s)
    transport.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await transport


def served_config(suite: Suite, task: Task, options: ServeOptions) -> dict[str, Any]:
    """The campaign facts a served run pins: exactly `kaudit run`'s, except the seed.

    Faults and identity (in the run digest and on their own), suite, template and task
    digests: a served run with faults is never appended to a campaign of bare runs, nor
    the other way round. Each served run brings its own seed, so none is pinned.
    """
    plan = CampaignPlan(name=options.campaign, k=1, conditions=options.conditions)
    config = plan.config(suite, [task])
    del config["seed"]
    return config


def open_served(ledger_path: Path, suite: Suite, task: Task, options: ServeOptions) -> str:
    """Check, before serving, that the ledger will take the run; returns the run's claim.

    Raises `LedgerError` on a broken chain, a campaign of imported runs, or a campaign
    started with other faults, identity or task versions; no client is served then.
    Runs an earlier serve left in the spool are appended first. The claim (pass it to
    `append_served`) is what lets this run, and only it, be appended from the spool.
    """
    with Ledger(ledger_path) as ledger, _writer_lock(ledger):
        walk_chain(ledger)
        open_for_append(ledger, options.campaign, served_config(suite, task, options))
        drain_spool(ledger)
        return ledger.issue_claim(options.campaign, task.id)


def append_served(
    ledger_path: Path,
    suite: Suite,
    result: RunResult,
    options: ServeOptions,
    wait_s: float = LOCK_WAIT_S,
    claim: str | None = None,
) -> RunRecord:
    """Append a served run to the ledger as the next run index of its cell.

    `options` are the ones it was served with (their faults and identity are pinned in
    the campaign, as `kaudit run` pins its own). The run is spooled first (see
    `kaudit.ledger._spool`), then appended under the writer lock, waiting up to `wait_s`
    for another writer; if the lock stays taken, `RunSpooled` says where the run waits
    for the next writer of this ledger. Nothing finished is ever dropped. `claim` is
    the one `open_served` issued when the run started (issued here when None).
    """
    config = served_config(suite, suite.tasks[result.record.task], options)
    if claim is None:  # a caller that did not `open_served`: the claim is issued now
        with Ledger(ledger_path) as ledger:
            claim = ledger.issue_claim(options.campaign, result.record.task)
    spooled = spool_run(ledger_path, result.record, result.final_image, config, claim)
    with contextlib.ExitStack() as stack:
        try:
            ledger = stack.enter_context(Ledger(ledger_path))
            stack.enter_context(_writer_lock(ledger, wait_s))
        except LedgerError as exc:  # locked out: the run waits in the spool
            raise RunSpooled(
                f"{exc}; the finished run is kept in {spooled.path} and is appended by the "
                f"next writer of {ledger_path} (`kaudit mcp serve`, `kaudit run`, or "
                f"`kaudit ledger drain {ledger_path}`)",
                spooled.path,
            ) from None
        appended = drain_spool(ledger, must=spooled.spool_id).appended
        # Another serve that drained the spool first may have appended this run already.
        cell = (spooled.record.campaign, spooled.record.model, spooled.record.task)
        record = appended.get(spooled.spool_id) or ledger.spooled_record(cell, spooled.spool_id)
    if record is None:
        raise LedgerError(f"{ledger_path}: the run kept in {spooled.path} was not appended")
    return record


@contextlib.contextmanager
def _writer_lock(ledger: Ledger, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """The ledger's writer lock, retried for up to `wait_s` while another writer has it.

    Serves of one ledger each hold it for milliseconds, so two that end together
    queue; a campaign holding it longer than the wait leaves a finished run spooled.
    """
    deadline = time.monotonic() + wait_s
    with contextlib.ExitStack() as stack:
        while True:
            try:
                stack.enter_context(ledger.writer_lock())
                break
            except LedgerError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)
        yield
