"""What one tool call costs through the full gateway, against calling the tool directly.

On one seeded enterprise sandbox, the same mix of calls (a lookup and an update on the
agent's own organization, alternating) runs `--calls` times through a bare `Tool.call`
(the baseline: what a harness without layers does) and through the run gateway with
every layer on: recording, the 64 KiB limit, an identity with an organization scope
(SQLite authorizer + scope triggers, each call in a savepoint) and a fault rule that
draws on every write (rate 0.001, so the draw is paid and almost never fires).
`ratio` = gateway / baseline per call; the median of `--repeats` rounds is reported.

    python bench/gateway.py [--calls 2000] [--repeats 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from kaudit.harness import build_gateway
from kaudit.spec import FaultRule, Identity
from kaudit.tools import ToolContext
from kaudit.worlds._world import get_world

CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("find_incident_by_number", {"number": "INC0001042"}),
    ("update_incident", {"incident_id": "INC_042", "priority": "high"}),
)


def per_call_ms(calls: int, *, gateway: bool) -> float:
    substrate = get_world("enterprise").substrate()
    sandbox = substrate.seed("bench")
    tools = {name: substrate.tools[name] for name, _ in CALLS}
    try:
        if gateway:
            run = build_gateway(
                tools,
                sandbox,
                seed=1,
                faults=(FaultRule(kind="ack_lost_after_commit", rate=0.001),),
                identity=Identity(role="desk", scope={"org_id": "ORG_001"}),
            ).gateway
            start = time.perf_counter()
            for i in range(calls):
                name, arguments = CALLS[i % 2]
                run.call(str(i), name, arguments)
        else:
            ctx = ToolContext(db=sandbox.db)
            start = time.perf_counter()
            for i in range(calls):
                name, arguments = CALLS[i % 2]
                tools[name].call(ctx, arguments)
        return (time.perf_counter() - start) * 1000.0 / calls
    finally:
        sandbox.close()


def measure(calls: int, repeats: int) -> dict[str, Any]:
    bare = statistics.median(per_call_ms(calls, gateway=False) for _ in range(repeats))
    full = statistics.median(per_call_ms(calls, gateway=True) for _ in range(repeats))
    return {
        "calls": calls,
        "repeats": repeats,
        "baseline_ms_per_call": round(bare, 4),
        "gateway_ms_per_call": round(full, 4),
        "ratio": round(full / bare, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args()
    out = measure(args.calls, args.repeats)
    if args.json:
        print(json.dumps(out))
        return
    print(
        f"{out['calls']} calls x {out['repeats']}: bare Tool.call "
        f"{out['baseline_ms_per_call']:.4f} ms/call, full gateway "
        f"{out['gateway_ms_per_call']:.4f} ms/call, ratio {out['ratio']:.2f}"
    )


if __name__ == "__main__":
    main()
