"""A real model audited end to end: SmolLM2-135M on llama.cpp's `llama-server`, local.

Runs a campaign of built-in tasks at temperature 0.6, k = 2, concurrency 1 (one slot, so
model time and wall time are comparable), through `kaudit run` as a user would, with a
ledger in a temporary folder. Prints the wall time, the time spent awaiting the model
(each run's `extra.model_ms`, plus the preflight probe), the harness's share of the wall
time (everything else: seeding, tools, dump, label, ledger; the goal is under 1%), the
generation rate, and the report's per-cell table. Needs `./install-local-model.sh`.
Kept out of CI: it takes minutes.

    python bench/real_model.py [--tasks 8 | --tasks all | --tasks ID,ID] [--k 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import yaml
from typer.testing import CliRunner

from kaudit.agents.chat.local import LocalServer, ServerOptions
from kaudit.cli.main import app
from kaudit.ledger import Ledger
from kaudit.suites import load_suite

DEFAULT_TASKS = 8
"""The first tasks of each vertical in turn, for a bench of a few minutes."""


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


def main() -> None:
    """Serve the model, run the campaign, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=str(DEFAULT_TASKS))
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tasks = chosen_tasks(args.tasks)
    with (
        tempfile.TemporaryDirectory() as folder,
        LocalServer(
            ServerOptions(slots=1, max_reply_tokens=args.max_tokens), log_path=Path(folder) / "log"
        ) as server,
    ):
        config = Path(folder) / "smollm2.yaml"
        config.write_text(yaml.safe_dump({
            "provider": "openai", "name": "smollm2", "label": "smollm2-135m-q4_1",
            "base_url": server.base_url, "temperature": 0.6, "max_tokens": args.max_tokens,
            "timeout_s": 300, "max_retries": 2,
        }))  # fmt: skip
        ledger = Path(folder) / "audit.sqlite"
        argv = ["run", "--suite", "builtin", "--tasks", ",".join(tasks), "--k", str(args.k)]
        argv += ["--model", str(config), "--ledger", str(ledger), "--concurrency", "1"]
        started = time.perf_counter()
        ran = CliRunner().invoke(app, argv)
        wall = time.perf_counter() - started
        if ran.exit_code not in (0, 1):
            sys.exit(f"kaudit run failed ({ran.exit_code}): {ran.output}")
        with Ledger(ledger) as store:
            records = list(store.records())
            manifest = store.manifest("default") or {}
        report = CliRunner().invoke(app, ["report", str(ledger)]).output
    model_s = sum(float(r.extra.get("model_ms", 0.0)) for r in records) / 1000
    # the preflight probe is model time too, spent once before the first run
    probe = manifest.get("agents", {}).get("smollm2-135m-q4_1", {}).get("preflight", {})
    preflight_s = float(probe.get("seconds", 0.0)) if isinstance(probe, dict) else 0.0
    out_tokens = sum(r.output_tokens for r in records)
    figures = {
        "runs": len(records),
        "tasks": len(tasks),
        "k": args.k,
        "wall_s": round(wall, 2),
        "model_s": round(model_s, 2),
        "preflight_s": round(preflight_s, 2),
        "harness_share": round((wall - model_s - preflight_s) / wall, 4),
        "output_tokens_per_s": round(out_tokens / model_s, 1) if model_s else None,
        "input_tokens": sum(r.input_tokens for r in records),
        "output_tokens": out_tokens,
        "tool_calls": sum(len(r.tool_calls) for r in records),
        "damage_runs": sum(r.counts_as_damage for r in records),
        "errored_runs": sum(r.termination == "errored" for r in records),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    for name, value in figures.items():
        print(f"{name:>20}: {value}")
    print(report)


if __name__ == "__main__":
    main()
