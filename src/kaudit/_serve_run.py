"""`kaudit.serve_run`: one served run as one call, from names to its record.

Everything `kaudit mcp serve` does between parsing its options and printing is here:
the suite and the task, the run conditions, the ledger checked before a client is
served, the run served over MCP, and the record appended. Nothing here prints; a caller
that wants to watch passes `on_url`, `on_record` and `on_spooled`.

It is not named `serve` because `kaudit.serve` is the subpackage holding the server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from kaudit._require import require_seconds
from kaudit._threads import outside_running_loop
from kaudit.errors import SuiteError
from kaudit.harness import RunResult, run_conditions
from kaudit.ledger import RunRecord
from kaudit.spec import FaultRule, Identity
from kaudit.substrate._choice import DEFAULT_SUBSTRATE
from kaudit.suites import Suite, load_suite

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kaudit.ledger._spool import RunSpooled


def serve_run(
    task: str,
    suite: str | Suite = "builtin",
    *,
    ledger: str | Path | None = None,
    seed: int = 0,
    campaign: str = "mcp",
    model: str | None = None,
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 0,
    keep_dumps: bool = False,
    faults: str | Sequence[FaultRule] | None = None,
    identity: str | Path | Identity | None = None,
    substrate: str = DEFAULT_SUBSTRATE,
    idle_timeout: float | None = None,
    on_url: Callable[[str], None] | None = None,
    on_record: Callable[[RunRecord], None] | None = None,
    on_spooled: Callable[[RunSpooled], None] | None = None,
) -> RunRecord | None:
    """Serve one fresh sandbox of `task` over MCP until the client finishes, leaves or idles.

    The run is dumped, labeled and, with `ledger`, appended as the next run of its
    (campaign, model, task) cell; the ledger is checked before any client is served.
    Returns the record as kept (its real run index), or None when the ledger stayed
    held by another writer: the run then waits in the spool and `on_spooled` says where.
    `on_url` receives the HTTP URL; `on_record` the record as soon as the run is over,
    before the transport winds down. `suite`, `faults`, `identity` and `substrate` mean
    what they mean for `kaudit.audit`; after `idle_timeout` seconds without a call
    (default `kaudit.serve._timeouts.IDLE_TIMEOUT_S`) the run ends stalled. Raises `KauditError`
    (or a subclass) naming the bad input; runs inside a notebook's event loop too.
    """
    from kaudit.ledger._spool import RunSpooled
    from kaudit.serve import ServeOptions
    from kaudit.serve._serve import append_served, open_served, serve_task
    from kaudit.serve._timeouts import IDLE_TIMEOUT_S

    if idle_timeout is not None:
        require_seconds("idle_timeout", idle_timeout)
    loaded = load_suite(suite, substrate) if isinstance(suite, str) else suite
    if task not in loaded.tasks:
        raise SuiteError(f"no task {task!r} in suite {loaded.name}")
    chosen = loaded.tasks[task]
    options = ServeOptions(
        transport=transport,
        host=host,
        port=port,
        seed=seed,
        model=model,
        campaign=campaign,
        keep_dump=keep_dumps,
        conditions=run_conditions(loaded, [chosen], faults, identity),
        idle_timeout_s=IDLE_TIMEOUT_S if idle_timeout is None else idle_timeout,
    )
    path = None if ledger is None else Path(ledger)
    claim = None
    if path is not None:  # refuse before a client is served; the claim lets its run in
        claim = open_served(path, loaded, chosen, options)
    kept: list[RunRecord] = []

    def record(result: RunResult) -> None:
        try:
            run = (
                append_served(path, loaded, result, options, claim=claim) if path else result.record
            )
        except RunSpooled as spooled:  # safe on disk; the next serve appends it
            if on_spooled is not None:
                on_spooled(spooled)
            return
        kept.append(run)
        if on_record is not None:
            on_record(run)

    world = loaded.substrate(chosen)
    outside_running_loop(
        lambda: asyncio.run(serve_task(chosen, world, options, on_url=on_url, on_result=record)),
        name="kaudit-serve",
    )
    return kept[0] if kept else None
