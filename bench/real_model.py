"""A real model audited end to end: SmolLM2-135M on llama.cpp's server (xllamacpp), local.

Runs a campaign of built-in tasks at temperature 0.6 through `kaudit run`, as a user
would, with a ledger in a temporary folder, on a server with `--slots` slots and at
`--concurrency` = slots. Then sends the very same requests (the bodies the campaign sent,
recorded on the way out) straight to a freshly started server (an empty prompt cache, as
the campaign's had) from a plain concurrent client with as many workers, and prints the
campaign's throughput against that client's.

Prints, in one run:
- `stack_s`: the time at least one of the campaign's model calls was in flight, retry
  backoff and rate-limit waits included (waiting on the stack is not kaudit's work), plus
  the preflight probe (`preflight_s`);
- `harness_share`: the rest of the wall time, when the model server had nothing of
  kaudit's to do (seeding, tools, dump, label, ledger; the goal is under 1%);
- `throughput_ratio`: the campaign's output tokens per second of its run phase over the
  direct client's (the goal is at least 0.9);
- the API errors by kind, the runs with a tool call, and the report's per-cell table.

Needs `./install-local-model.sh`. Kept out of CI: it takes minutes.

    python bench/real_model.py [--tasks 8 | --tasks all | --tasks ID,ID] [--k 2] [--json]
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from kaudit.agents.chat.local import LocalServer, ServerOptions
from kaudit.cli.main import app
from kaudit.ledger import Ledger
from kaudit.suites import load_suite

_openai = importlib.import_module("kaudit.agents.chat._openai")
_session = importlib.import_module("kaudit.agents.chat._session")
"""The modules whose `post` and `ChatSession._call` the bench wraps (the package's own
names shadow these attributes)."""
DEFAULT_TASKS = 8
"""The first tasks of each vertical in turn, for a bench of a few minutes."""
LABEL = "smollm2-135m-q4_1"


def chosen_tasks(spec: str) -> list[str]:
    """Task ids: `all`, a count (round-robin over the verticals), or a comma list."""
    ids = [task.id for task in load_suite("builtin", "sqlite").select(None)]
    if spec == "all":
        return ids
    if not spec.isdigit():
        return spec.split(",")
    by_vertical: dict[str, list[str]] = {}
    for task_id in ids:
        by_vertical.setdefault(task_id.split("/")[0], []).append(task_id)
    order = [t for group in zip(*by_vertical.values(), strict=False) for t in group]
    return order[: int(spec)]


class Recorder:
    """The campaign's run-phase request bodies, and when its model calls were in flight."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.spans: list[tuple[float, float]] = []
        self._lock = threading.Lock()

    def busy_s(self) -> float:
        """The length of the union of the spans: time with at least one call in flight."""
        total, end = 0.0, float("-inf")
        for start, stop in sorted(self.spans):
            if stop > end:
                total += stop - max(start, end)
                end = stop
        return total

    @contextmanager
    def installed(self) -> Iterator[None]:
        """Wrap the OpenAI adapter's `post` (bodies) and a session's `_call` (spans)."""
        post, call = _openai.post, _session.ChatSession._call

        async def recording_post(client: Any, path: str, body: Any, headers: Any) -> Any:
            if "kaudit-preflight" not in str(headers.get("X-Kaudit-Run-Id", "")):
                with self._lock:
                    self.bodies.append(body.content())
            return await post(client, path, body, headers)

        async def timed_call(session: Any) -> Any:
            started = time.perf_counter()
            try:
                return await call(session)
            finally:
                with self._lock:
                    self.spans.append((started, time.perf_counter()))

        _openai.post = recording_post  # type: ignore[assignment]
        _session.ChatSession._call = timed_call  # type: ignore[method-assign]
        try:
            yield
        finally:
            _openai.post = post  # type: ignore[assignment]
            _session.ChatSession._call = call  # type: ignore[method-assign]


def direct_client(url: str, bodies: list[bytes], workers: int) -> tuple[float, int, int]:
    """Send `bodies` to `url` from `workers` threads; wall seconds, output tokens, errors."""

    def send(body: bytes) -> tuple[int, int]:
        request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=600) as reply:
                usage = json.loads(reply.read()).get("usage") or {}
        except OSError:  # an HTTP 500 on a call the server cannot parse, as in the campaign
            return 0, 1
        return int(usage.get("completion_tokens") or 0), 0

    started = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(send, bodies))
    return time.perf_counter() - started, sum(r[0] for r in results), sum(r[1] for r in results)


def campaign(
    server: LocalServer, folder: Path, tasks: list[str], args: argparse.Namespace
) -> tuple[float, list[Any], dict[str, Any], str]:
    """`kaudit run` on the local model: wall seconds, records, manifest, report text."""
    config = folder / "smollm2.yaml"
    config.write_text(yaml.safe_dump({
        "provider": "openai", "name": "smollm2", "label": LABEL,
        "base_url": server.base_url, "temperature": 0.6, "max_tokens": args.max_tokens,
        "timeout_s": 600, "max_retries": 2,
    }))  # fmt: skip
    ledger = folder / "audit.sqlite"
    argv = ["run", "--suite", "builtin", "--tasks", ",".join(tasks), "--k", str(args.k)]
    argv += ["--model", str(config), "--ledger", str(ledger)]
    argv += ["--concurrency", str(args.slots)]
    started = time.perf_counter()
    ran = CliRunner().invoke(app, argv)
    wall = time.perf_counter() - started
    if ran.exit_code not in (0, 1):
        sys.exit(f"kaudit run failed ({ran.exit_code}): {ran.output}")
    with Ledger(ledger) as store:
        records = list(store.records())
        manifest = store.manifest("default") or {}
    report = CliRunner().invoke(app, ["report", str(ledger)]).output
    return wall, records, manifest, report


def figures(
    wall: float, records: list[Any], manifest: dict[str, Any], recorder: Recorder,
    direct: tuple[float, int, int], tasks: list[str], args: argparse.Namespace,
) -> dict[str, Any]:  # fmt: skip
    """The printed figures of one bench run."""
    probe = manifest.get("agents", {}).get(LABEL, {}).get("preflight", {})
    preflight_s = float(probe.get("seconds", 0.0)) if isinstance(probe, dict) else 0.0
    busy_s = recorder.busy_s()
    out_tokens = sum(r.output_tokens for r in records)
    run_phase_s = wall - preflight_s
    direct_s, direct_tokens, direct_errors = direct
    campaign_rate = out_tokens / run_phase_s if run_phase_s > 0 else 0.0
    direct_rate = direct_tokens / direct_s if direct_s > 0 else 0.0
    errors = Counter(str(r.extra["api_error"]) for r in records if r.extra.get("api_error"))
    return {
        "runs": len(records),
        "tasks": len(tasks),
        "k": args.k,
        "slots": args.slots,
        "concurrency": args.slots,
        "wall_s": round(wall, 2),
        "stack_s": round(busy_s + preflight_s, 2),
        "preflight_s": round(preflight_s, 2),
        "harness_share": round((wall - busy_s - preflight_s) / wall, 4),
        "model_calls": len(recorder.bodies),
        "output_tokens": out_tokens,
        "campaign_tokens_per_s": round(campaign_rate, 2),
        "direct_s": round(direct_s, 2),
        "direct_output_tokens": direct_tokens,
        "direct_tokens_per_s": round(direct_rate, 2),
        "direct_http_errors": direct_errors,
        "throughput_ratio": round(campaign_rate / direct_rate, 3) if direct_rate else None,
        "input_tokens": sum(r.input_tokens for r in records),
        "tool_calls": sum(len(r.tool_calls) for r in records),
        "runs_with_tool_call": sum(bool(r.tool_calls) for r in records),
        "api_errors": dict(sorted(errors.items())),
        "retries": sum(r.retries for r in records),
        "damage_runs": sum(r.counts_as_damage for r in records),
        "errored_runs": sum(r.termination == "errored" for r in records),
    }


def main(argv: list[str] | None = None) -> None:
    """Serve the model, run the campaign, replay its requests directly, print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", default=str(DEFAULT_TASKS))
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--slots", type=int, default=2, help="server slots = concurrency")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    tasks = chosen_tasks(args.tasks)
    recorder = Recorder()
    options = ServerOptions(slots=args.slots, max_reply_tokens=args.max_tokens)
    with tempfile.TemporaryDirectory() as folder:
        with LocalServer(options, log_path=Path(folder) / "log") as server, recorder.installed():
            wall, records, manifest, report = campaign(server, Path(folder), tasks, args)
        # A fresh server for the direct client: the first one's prompt cache holds every
        # prompt of the campaign, which would make the replay's prompts free.
        with LocalServer(options, log_path=Path(folder) / "direct-log") as server:
            url = f"{server.base_url}/chat/completions"
            direct = direct_client(url, recorder.bodies, args.slots)
    result = figures(wall, records, manifest, recorder, direct, tasks, args)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for name, value in result.items():
        print(f"{name:>22}: {value}")
    print(report)


if __name__ == "__main__":
    main()
