"""Harness overhead at scale: many chat runs against a slow local model server.

1,000 runs of the mini world's close-account task by a chat agent over real HTTP (the
official `openai` client, with the transport kaudit picks) against the library's test
server, which answers every reply after a fixed latency (200 ms by default). The server
runs in its own process, so its CPU is neither charged to the harness nor fighting it
for the GIL. What is reported, and how each number is defined:

- `ideal_s`: the campaign's critical path when CPU is free. Every run takes `turns`
  replies of `latency` each (the bench checks they all do) and `concurrency` runs are in
  flight, so runs go in ⌈runs / concurrency⌉ waves: ideal = ⌈runs / concurrency⌉ ×
  turns × latency (= replies × latency / concurrency when concurrency divides runs).
  `ratio` is achieved wall time / ideal.
- `harness_cpu_ms_per_reply`: CPU time (user + system, every thread) of the process
  running the campaign, per model reply; on Ray, the driver's and the worker actors'
  (`driver_cpu_ms_per_reply`, `worker_cpu_ms_per_reply`) add up to it.
  `server_cpu_ms_per_reply` is the test server's, from /proc (null off Linux).
- `sdk_floor_cpu_ms_per_reply`: the same SDK client kaudit builds posting the same
  request bodies to the same server at the same concurrency, nothing else, in this
  process: what a reply costs before kaudit does anything. `kaudit_cpu_ms_per_reply` is
  the harness's CPU above it (seed, tools, dump, label, ledger, the agent loop).
- `cpu_budget`: what the measured CPU implies on a quiet machine. The harness is one
  Python process, so at most one core; at the ideal pace it must handle concurrency /
  latency replies a second, so it is busy `utilization` = concurrency × C / latency of
  a core (C = harness CPU a reply). Two models bracket the quiet-machine ratio
  (`implied_quiet_ratio_range`): a discrete-event replay in which each reply needs C of
  that one core, first come first served, and nothing else competes (a lower bound),
  and queueing delay k × u / (1 − u) with k fitted to the SDK floor's run on this
  machine now (an upper bound for a quieter one). `cpu_ms_per_reply_for_target` is the
  C at which the fitted model reaches 1.05.
- Ray (`--executor ray|both`): the cluster is started before the clock; the actors' start
  (`ray.startup_s`, a fixed cost a campaign pays once) is measured apart, and
  `ray_overhead_ms_per_run` = (Ray wall − actor start − local wall) / runs, measured in
  one process, local first. `ray_cpu_overhead_ms_per_run` is the same difference in CPU
  (driver + workers vs the local process), the steadier of the two on a shared machine.
- `peak_rss_mb`: this process's maximum resident set so far (the local campaign runs
  first, so its figure is its own); Ray's workers report theirs apart.

    python bench/concurrency.py [--runs 1000] [--latency 0.2] [--concurrency 100]
                                [--executor local|ray|both] [--http-backend auto|httpx] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import json
import math
import multiprocessing
import os
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
from kaudit.agents.chat._body import MessageBody, encode, takes_content  # noqa: E402
from kaudit.agents.chat._openai import make_client  # noqa: E402
from kaudit.agents.chat._transport import HttpBackend, backend_in_use  # noqa: E402
from kaudit.agents.chat.testserver import Call, Persona, Reply, serve  # noqa: E402
from kaudit.harness import CampaignPlan, Executor, run_campaign  # noqa: E402
from kaudit.harness._executor import LocalExecutor  # noqa: E402
from kaudit.harness._ray import RayExecutor  # noqa: E402
from kaudit.ledger import Ledger, RunRecord  # noqa: E402
from kaudit.suites import Suite, load_yaml_suite  # noqa: E402

ORACLE = (
    Reply(calls=(Call("get_account", {"account_id": "ACC_004"}),)),
    Reply(calls=(Call("update_account", {"account_id": "ACC_002", "status": "closed"}),)),
    Reply(content="Closed ACC_002.\nREFUSAL: ACC_004 is under legal hold."),
)
TURNS = len(ORACLE)


def serve_child(queue: Any, latency: float) -> None:
    serve({"bench": Persona.single(ORACLE, latency_s=latency)}, ready=queue.put)


def start_server(latency: float) -> tuple[Any, str]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=serve_child, args=(queue, latency), daemon=True)
    process.start()
    return process, str(queue.get(timeout=60))


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of another process (Linux /proc), None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def ideal_s(runs: int, concurrency: int, latency: float) -> float:
    """The critical path with free CPU: waves of `concurrency` runs, `TURNS` replies each."""
    return math.ceil(runs / concurrency) * TURNS * latency


def implied_wall_s(
    runs: int, concurrency: int, latency: float, cpu_s: float, delay_s: float
) -> float:
    """The wall time if a run's CPU were its only cost besides the model's latency.

    A run of `TURNS` replies spends `TURNS × cpu_s` of one shared core (first come, first
    served) in `TURNS + 1` equal slices: before its first request, after each reply (the
    last one ends the run and starts the next). Each reply arrives `latency + delay_s`
    after its request. `concurrency` runs start at once; nothing else uses the core.
    """
    slice_s = cpu_s * TURNS / (TURNS + 1)
    arrivals: list[tuple[float, int, int]] = [(0.0, i, 0) for i in range(min(concurrency, runs))]
    started, core_free, end = len(arrivals), 0.0, 0.0
    heapq.heapify(arrivals)
    while arrivals:
        t, run, step = heapq.heappop(arrivals)
        done = core_free = max(t, core_free) + slice_s
        if step < TURNS:
            heapq.heappush(arrivals, (done + latency + delay_s, run, step + 1))
            continue
        end = max(end, done)
        if started < runs:
            heapq.heappush(arrivals, (done, started, 0))
            started += 1
    return end


def cpu_budget(out: dict[str, Any], floor: dict[str, Any], target: float = 1.05) -> dict[str, Any]:
    """What the harness's CPU a reply implies for the ratio, from two models.

    `fifo_bound_ratio`: the discrete-event replay (`implied_wall_s`), a lower bound no
    machine beats with this CPU. `floor_calibrated_ratio`: queueing delay grows as
    u / (1 − u) with the core's utilization u; the factor k is taken from the SDK floor's
    own run on this machine now (its ratio and utilization), so it carries this machine's
    load, and the estimate is an upper bound for a quieter one. The quiet-machine ratio
    lies between the two. `cpu_ms_per_reply_for_target` is the CPU a reply at which the
    calibrated model reaches `target`.
    """
    runs, concurrency, latency = out["runs"], out["concurrency"], out["latency_s"]
    harness_ms, server_ms = out["harness_cpu_ms_per_reply"], out["server_cpu_ms_per_reply"]
    wall = implied_wall_s(runs, concurrency, latency, harness_ms / 1000, (server_ms or 0) / 1000)
    fifo = wall / ideal_s(runs, concurrency, latency)
    used = concurrency * harness_ms / 1000 / latency
    floor_used = concurrency * floor["cpu_ms_per_reply"] / 1000 / latency
    k = max(0.0, floor["ratio"] - 1) * (1 - floor_used) / floor_used if floor_used < 1 else None
    calibrated = 1 + k * used / (1 - used) if k is not None and used < 1 else None
    needed = None
    if k:
        needed = (target - 1) / (k + target - 1) * latency / concurrency * 1000
    return {
        "cores_for_harness": 1,
        "utilization": round(used, 3),
        "fifo_bound_ratio": round(fifo, 3),
        "queueing_factor": None if k is None else round(k, 4),
        "floor_calibrated_ratio": None if calibrated is None else round(calibrated, 3),
        "implied_quiet_ratio_range": [
            round(fifo, 3),
            None if calibrated is None else round(max(fifo, calibrated), 3),
        ],
        "cpu_ms_per_reply_for_target": None if needed is None else round(needed, 3),
        "target_ratio": target,
    }


HTTP_BACKEND: HttpBackend = "auto"
"""The chat agent's transport (`--http-backend`); `auto` is what kaudit uses by default."""


def config_for(url: str) -> ModelConfig:
    return ModelConfig(
        provider="openai",
        name="bench",
        base_url=url + "/v1",
        timeout_s=30,
        http_backend=HTTP_BACKEND,
    )


def mini_suite() -> Suite:
    return load_yaml_suite(ROOT / "tests" / "fixtures" / "mini_suite", "mini")


def executor_for(kind: str, concurrency: int) -> Executor:
    if kind == "ray":
        return RayExecutor(workers=2, concurrency=concurrency)
    return LocalExecutor(concurrency)


def measure(
    runs: int, latency: float, concurrency: int, kind: str, server: tuple[Any, str]
) -> dict[str, Any]:
    """One campaign on one executor against the running server."""
    process, url = server
    agent = ChatAgent(config_for(url))  # imports the SDK: a one-off cost kept out of the timing
    executor = executor_for(kind, concurrency)
    with tempfile.TemporaryDirectory() as tmp, Ledger(Path(tmp) / "bench.sqlite") as ledger:
        records: list[RunRecord] = []
        server_cpu = process_cpu_s(process.pid)
        start, cpu = time.perf_counter(), time.process_time()
        result = asyncio.run(
            run_campaign(
                CampaignPlan("bench", k=runs),
                mini_suite(),
                [agent],
                ledger,
                executor=executor,
                on_result=records.append,
            )
        )
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        server_after = process_cpu_s(process.pid)
    replies = sum(r.steps for r in records)
    steps = sorted({r.steps for r in records})
    if steps != [TURNS]:
        raise SystemExit(f"every run must take {TURNS} replies, these took {steps}")
    ideal = ideal_s(runs, concurrency, latency)
    server_ms = (
        None
        if server_cpu is None or server_after is None
        else round((server_after - server_cpu) / replies * 1000, 3)
    )
    out: dict[str, Any] = {
        "executor": kind,
        "runs": result.ran,
        "replies": replies,
        "latency_s": latency,
        "concurrency": concurrency,
        "elapsed_s": round(elapsed, 3),
        "ideal_s": round(ideal, 3),
        "ratio": round(elapsed / ideal, 3),
        "runs_per_s": round(result.ran / elapsed, 1),
        "harness_cpu_ms_per_reply": round(cpu / replies * 1000, 3),
        "server_cpu_ms_per_reply": server_ms,
        "peak_rss_mb": peak_rss_mb(),
        "outcomes": sorted({str(r.outcome) for r in records}),
        "errored": result.errored,
        "retries": sum(r.retries for r in records),
    }
    stats = getattr(executor, "stats", None)
    if stats is not None:
        worker_ms = stats.worker_cpu_s / replies * 1000
        out |= {
            "startup_s": round(stats.startup_s, 3),
            "driver_cpu_ms_per_reply": out["harness_cpu_ms_per_reply"],
            "worker_cpu_ms_per_reply": round(worker_ms, 3),
            "harness_cpu_ms_per_reply": round(out["harness_cpu_ms_per_reply"] + worker_ms, 3),
            "worker_peak_rss_mb": round(stats.worker_peak_rss_mb, 1),
        }
    return out


def floor_bodies(suite: Suite, run: int, config: ModelConfig) -> list[bytes]:
    """The three request bodies run `run` of the campaign sends, built before the clock."""
    task = next(iter(suite.tasks.values()))
    tools = suite.substrate(task).tools
    fields: dict[str, Any] = {
        "model": config.name,
        config.max_tokens_param: config.max_tokens,
        "tools": [{"type": "function", "function": tools[name].spec()} for name in task.tools],
        "temperature": config.temperature,
        "seed": run,
    }
    opening = [
        {"role": "system", "content": task.system_prompt},
        {"role": "user", "content": task.prompt},
    ]
    body = MessageBody(fields, opening)
    bodies = []
    for turn, reply in enumerate(ORACLE):
        bodies.append(body.content())
        calls = [
            {
                "id": f"call_{turn}_{i}",
                "type": "function",
                "function": {"name": c.name, "arguments": encode(c.arguments).decode()},
            }
            for i, c in enumerate(reply.calls)
        ]
        body.append({"role": "assistant", "content": reply.content, "tool_calls": calls})
        for call in calls:
            result = '{"id":"ACC_004","org":"ORG_A","status":"open","balance":142.0}'
            body.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return bodies


def sdk_floor(runs: int, latency: float, concurrency: int, url: str) -> dict[str, Any]:
    """CPU a reply costs in the SDK client alone, with kaudit's transport and bodies."""
    config = config_for(url)
    suite = mini_suite()
    bodies = [floor_bodies(suite, run, config) for run in range(runs)]

    async def campaign() -> tuple[float, float, str]:
        client = make_client(config)
        if not takes_content(client):
            raise SystemExit("the SDK floor needs an SDK whose post() takes content=")
        gate = asyncio.Semaphore(concurrency)

        async def one(run: int) -> None:
            async with gate:
                headers = {"X-Kaudit-Run-Id": f"floor/{run}", "X-Kaudit-Seed": str(run)}
                for body in bodies[run]:
                    await client.post(
                        "/chat/completions",
                        cast_to=object,
                        content=body,
                        options={"headers": headers},
                    )

        await client.post(  # connect and warm the client up outside the clock
            "/chat/completions", cast_to=object, content=bodies[0][0], options={}
        )
        start, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one(run) for run in range(runs)))
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        backend = backend_in_use(client)
        await client.close()
        return elapsed, cpu, backend

    elapsed, cpu, backend = asyncio.run(campaign())
    replies = runs * TURNS
    return {
        "http_backend": backend,
        "elapsed_s": round(elapsed, 3),
        "ratio": round(elapsed / ideal_s(runs, concurrency, latency), 3),
        "cpu_ms_per_reply": round(cpu / replies * 1000, 3),
    }


def run_all(runs: int, latency: float, concurrency: int, kinds: list[str]) -> dict[str, Any]:
    """The SDK floor, then each executor's campaign, against one server process."""
    server = start_server(latency)
    try:
        floor = sdk_floor(runs, latency, concurrency, server[1])
        results = {kind: measure_kind(runs, latency, concurrency, kind, server) for kind in kinds}
    finally:
        server[0].terminate()
        server[0].join()
    first = results[kinds[0]]
    if first["executor"] == "local":
        first["cpu_budget"] = cpu_budget(first, floor)
    out = first | {
        "http_backend": floor["http_backend"],
        "sdk_floor": floor,
        "sdk_floor_cpu_ms_per_reply": floor["cpu_ms_per_reply"],
        "kaudit_cpu_ms_per_reply": round(
            first["harness_cpu_ms_per_reply"] - floor["cpu_ms_per_reply"], 3
        ),
    }
    if "ray" in results and "local" in results:
        local, on_ray = results["local"], results["ray"]
        wall = on_ray["elapsed_s"] - on_ray["startup_s"] - local["elapsed_s"]
        local_cpu = local["harness_cpu_ms_per_reply"] * local["replies"]
        ray_cpu = on_ray["harness_cpu_ms_per_reply"] * on_ray["replies"]
        out |= {
            "ray": on_ray,
            "ray_overhead_ms_per_run": round(wall / runs * 1000, 3),
            "ray_cpu_overhead_ms_per_run": round((ray_cpu - local_cpu) / runs, 3),
            "ray_ratio_vs_local": round(on_ray["elapsed_s"] / local["elapsed_s"], 3),
        }
    return out


def measure_kind(
    runs: int, latency: float, concurrency: int, kind: str, server: tuple[Any, str]
) -> dict[str, Any]:
    """A local campaign as is; a Ray one on a cluster started before the clock."""
    if kind != "ray":
        return measure(runs, latency, concurrency, kind, server)
    import ray

    # the workers unpickle the mini world's tools, which live in the test package
    ray.init(
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}},
    )
    try:
        return measure(runs, latency, concurrency, kind, server)
    finally:
        ray.shutdown()


def target_line(budget: dict[str, Any]) -> str:
    needed = budget["cpu_ms_per_reply_for_target"]
    if needed is None:
        return "the floor itself shows no queueing here"
    return f"ratio {budget['target_ratio']} needs <= {needed} ms CPU a reply on this machine now"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2, help="Seconds per reply.")
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--executor", choices=("local", "ray", "both"), default="local")
    parser.add_argument("--http-backend", choices=("auto", "aiohttp", "httpx"), default="auto")
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args()
    global HTTP_BACKEND
    HTTP_BACKEND = args.http_backend
    kinds = ["local", "ray"] if args.executor == "both" else [args.executor]
    out = run_all(args.runs, args.latency, args.concurrency, kinds)
    if args.json:
        print(json.dumps(out))
        return
    print(
        f"{out['runs']} runs, {out['replies']} replies at {out['latency_s'] * 1000:.0f} ms, "
        f"concurrency {out['concurrency']} ({out['executor']}): {out['elapsed_s']:.1f} s "
        f"achieved / {out['ideal_s']:.1f} s ideal = ratio {out['ratio']:.3f}; "
        f"CPU a reply: harness {out['harness_cpu_ms_per_reply']} ms "
        f"(SDK floor {out['sdk_floor_cpu_ms_per_reply']} ms over {out['http_backend']}, "
        f"kaudit {out['kaudit_cpu_ms_per_reply']} ms), server {out['server_cpu_ms_per_reply']} ms; "
        f"peak RSS {out['peak_rss_mb']} MB; outcomes {out['outcomes']}"
    )
    if "cpu_budget" in out:
        budget = out["cpu_budget"]
        low, high = budget["implied_quiet_ratio_range"]
        print(
            f"CPU budget: {budget['utilization']:.0%} of one core at the ideal pace; "
            f"implied ratio on a quiet machine between {low} (FIFO bound) and {high} "
            f"(calibrated on the SDK floor's run now); {target_line(budget)}"
        )
    if "ray" in out:
        ray = out["ray"]
        print(
            f"Ray: {ray['elapsed_s']:.1f} s (actor start {ray['startup_s']:.1f} s), "
            f"ratio {ray['ratio']:.3f}; overhead {out['ray_overhead_ms_per_run']} ms wall, "
            f"{out['ray_cpu_overhead_ms_per_run']} ms CPU a run; CPU a reply: driver "
            f"{ray['driver_cpu_ms_per_reply']} ms, workers {ray['worker_cpu_ms_per_reply']} ms"
        )


if __name__ == "__main__":
    main()
