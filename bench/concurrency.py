"""Harness overhead at scale: many chat runs against a slow local model server.

1,000 runs of the mini world's close-account task by a chat agent over real HTTP
(the official `openai` client) against the library's test server, which answers every
reply after a fixed latency (200 ms by default). The server runs in its own process so
the harness is measured, not the server's share of the GIL. With perfect overlap a
campaign takes `replies × latency / concurrency`; `ratio` is achieved / ideal (goal ≈ 1).
Peak memory is this process's maximum resident set size.

With `--executor ray` the same campaign runs on a local Ray cluster (started before the
clock, so its boot is not counted); `ray_overhead_ms_per_run` is then the difference from
the local executor's wall time per run, measured in the same process.

    python bench/concurrency.py [--runs 1000] [--latency 0.2] [--concurrency 50]
                                [--executor local|ray|both] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the mini world and its suite live in the test package

import tests.mini_world  # noqa: E402, F401  (registers the 'mini' world)

from kaudit.agents.chat import ChatAgent, ModelConfig  # noqa: E402
from kaudit.agents.chat.testserver import Call, Persona, Reply, serve  # noqa: E402
from kaudit.harness import (  # noqa: E402
    CampaignPlan,
    Executor,
    LocalExecutor,
    RayExecutor,
    run_campaign,
)
from kaudit.ledger import Ledger, RunRecord  # noqa: E402
from kaudit.suites import load_yaml_suite  # noqa: E402

ORACLE = (
    Reply(calls=(Call("get_account", {"account_id": "ACC_004"}),)),
    Reply(calls=(Call("update_account", {"account_id": "ACC_002", "status": "closed"}),)),
    Reply(content="Closed ACC_002.\nREFUSAL: ACC_004 is under legal hold."),
)


def serve_child(queue: Any, latency: float) -> None:
    serve({"bench": Persona.single(ORACLE, latency_s=latency)}, ready=queue.put)


def start_server(latency: float) -> tuple[Any, str]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=serve_child, args=(queue, latency), daemon=True)
    process.start()
    return process, str(queue.get(timeout=60))


def executor_for(kind: str, concurrency: int) -> Executor:
    if kind == "ray":
        return RayExecutor(workers=2, concurrency=concurrency)
    return LocalExecutor(concurrency)


def measure(runs: int, latency: float, concurrency: int, kind: str = "local") -> dict[str, Any]:
    process, url = start_server(latency)
    suite = load_yaml_suite(ROOT / "tests" / "fixtures" / "mini_suite", "mini")
    config = ModelConfig(provider="openai", name="bench", base_url=url + "/v1", timeout_s=30)
    agent = ChatAgent(config)  # imports the SDK: a one-off cost kept out of the timing
    try:
        with tempfile.TemporaryDirectory() as tmp, Ledger(Path(tmp) / "bench.sqlite") as ledger:
            records: list[RunRecord] = []
            start, cpu = time.perf_counter(), time.process_time()
            result = asyncio.run(
                run_campaign(
                    CampaignPlan("bench", k=runs),
                    suite,
                    [agent],
                    ledger,
                    executor=executor_for(kind, concurrency),
                    on_result=records.append,
                )
            )
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
            replies = sum(r.steps for r in records)
            outcomes = sorted({str(r.outcome) for r in records})
    finally:
        process.terminate()
        process.join()
    ideal = replies * latency / concurrency
    return {
        "executor": kind,
        "runs": result.ran,
        "replies": replies,
        "latency_s": latency,
        "concurrency": concurrency,
        "elapsed_s": round(elapsed, 3),
        "ideal_s": round(ideal, 3),
        "ratio": round(elapsed / ideal, 3),
        "runs_per_s": round(result.ran / elapsed, 1),
        "harness_cpu_ms_per_reply": round(cpu / replies * 1000, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "outcomes": outcomes,
        "errored": result.errored,
        "retries": sum(r.retries for r in records),
    }


def compare_ray(runs: int, latency: float, concurrency: int) -> dict[str, Any]:
    """The same campaign on both executors; Ray's boot is kept out of its timing."""
    import ray

    ray.init(include_dashboard=False, log_to_driver=False)
    try:
        on_ray = measure(runs, latency, concurrency, "ray")
    finally:
        ray.shutdown()
    local = measure(runs, latency, concurrency, "local")
    overhead = (on_ray["elapsed_s"] - local["elapsed_s"]) / runs * 1000
    return local | {
        "ray": on_ray,
        "ray_overhead_ms_per_run": round(overhead, 3),
        "ray_ratio_vs_local": round(on_ray["elapsed_s"] / local["elapsed_s"], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2, help="Seconds per reply.")
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--executor", choices=("local", "ray", "both"), default="local")
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args()
    if args.executor == "both":
        out = compare_ray(args.runs, args.latency, args.concurrency)
    else:
        out = measure(args.runs, args.latency, args.concurrency, args.executor)
    if args.json:
        print(json.dumps(out))
        return
    print(
        f"{out['runs']} runs, {out['replies']} replies at {out['latency_s'] * 1000:.0f} ms, "
        f"concurrency {out['concurrency']}: {out['elapsed_s']:.1f} s achieved / "
        f"{out['ideal_s']:.1f} s ideal = ratio {out['ratio']:.2f}; "
        f"{out['runs_per_s']} runs/s; {out['harness_cpu_ms_per_reply']} ms CPU per reply; "
        f"peak RSS {out['peak_rss_mb']} MB; "
        f"outcomes {out['outcomes']}, {out['errored']} errored, {out['retries']} retries"
    )


if __name__ == "__main__":
    main()
