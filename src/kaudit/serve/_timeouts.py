"""Time budgets of external agents: nothing served waits forever for an agent.

`kaudit run --agent mcp` gives each agent process a whole-run budget
(`agent_timeout`); `kaudit mcp serve` ends a run whose client has been silent for
its idle budget (`idle_timeout`). Either way the run ends `stalled`: the agent used
up its time without finishing, and the state it left is labeled as it is.
"""

from __future__ import annotations

import asyncio
import time

from kaudit.serve._calls import ServedRun

AGENT_TIMEOUT_S = 600.0
"""Default whole-run budget of an `--agent mcp` process."""
IDLE_TIMEOUT_S = 600.0
"""Default silence after which `mcp serve` ends its run."""


async def end_when_idle(served: ServedRun, idle_s: float) -> None:
    """Stall `served` once it has seen no activity for `idle_s` seconds; return when it is over.

    Activity is a call, its answer or a tool listing (`ServedRun.touch`).
    """
    while not served.over:
        silent = time.monotonic() - served.last_activity
        if silent >= idle_s:
            served.stall(f"client idle for {idle_s:g} s without calling finish")
            return
        await asyncio.sleep(idle_s - silent)
