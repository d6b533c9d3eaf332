"""HTML report scale: `kaudit report LEDGER --html FILE` on a large ledger.

Builds the page of a ledger (about 10,000 runs: `kaudit run --suite builtin --agent
reference --k 313 --ledger PATH` gives 10,955 with the suite's 35 tasks) as a child
process and reports the page's size, the command's wall and CPU time and its peak
resident memory (the child's own maximum RSS); targets: page <= 5 MB, built in <= 3 s,
<= 250 MB.

`--baseline-src DIR` builds the same page with another kaudit's source first on
PYTHONPATH (`git archive COMMIT src | tar -x -C DIR`, then `--baseline-src DIR/src`),
alternating run by run, and prints each figure's ratio now / baseline. `--plain` also
times `kaudit report LEDGER` without `--html` (the same ledger read and terminal tables),
so what the page itself adds can be read off, and the load of a shared machine judged
against that command's figure on a quiet one (docs/performance.md).

    python bench/html_scale.py --ledger PATH [--repeat 3] [--baseline-src DIR] [--plain]
        [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_PEAK = (
    "import resource, subprocess, sys; "
    "code = subprocess.run(sys.argv[1:]).returncode; "
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "print(usage.ru_maxrss, usage.ru_utime + usage.ru_stime, file=sys.stderr); "
    "sys.exit(code)"
)
_CLI = "from kaudit.cli.main import main; main()"


def build(ledger: Path, page: Path | None, src: str | None) -> dict[str, float]:
    """One page build: wall and CPU seconds, peak RSS in MB, page size in MB.

    With `page` None, the report without `--html` (page size 0).
    """
    env = dict(os.environ)
    # A user's kaudit starts from cached bytecode; without it every start compiles
    # kaudit's modules again (0.24 s), which some machines force with this variable.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if src is not None:
        env["PYTHONPATH"] = src
    html = [] if page is None else ["--html", str(page)]
    command = [sys.executable, "-c", _CLI, "report", str(ledger), *html]
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *command],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    wall = time.perf_counter() - started
    rss_kb, cpu = done.stderr.strip().splitlines()[-1].split()
    return {
        "wall_s": wall,
        "cpu_s": float(cpu),
        "peak_rss_mb": int(rss_kb) / 1024,
        "page_mb": 0.0 if page is None else page.stat().st_size / 1e6,
    }


def medians(samples: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(s[key] for s in samples) for key in samples[0]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ledger", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline-src", default=None)
    parser.add_argument("--plain", action="store_true", help="also time it without --html")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    now: list[dict[str, float]] = []
    base: list[dict[str, float]] = []
    plain: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="kaudit-html-") as tmp:
        for i in range(args.repeat):
            sides = [("now", None), ("baseline", args.baseline_src), ("plain", None)]
            if i % 2:
                sides.reverse()  # alternate which side runs first
            for side, src in sides:
                if (side == "baseline" and src is None) or (side == "plain" and not args.plain):
                    continue
                page = None if side == "plain" else Path(tmp) / f"{side}.html"
                {"now": now, "baseline": base, "plain": plain}[side].append(
                    build(args.ledger, page, src)
                )
    result: dict[str, Any] = {"now": medians(now)}
    if plain:
        result["plain"] = medians(plain)
    if base:
        result["baseline"] = medians(base)
        result["ratio_now_over_baseline"] = {
            key: result["now"][key] / result["baseline"][key] for key in result["now"]
        }
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    for side in ("now", "baseline", "plain"):
        if side in result:
            m = result[side]
            page = "no page" if side == "plain" else f"page {m['page_mb']:.2f} MB"
            print(
                f"{side:9} {page}, wall {m['wall_s']:.2f} s, "
                f"cpu {m['cpu_s']:.2f} s, peak {m['peak_rss_mb']:.0f} MB"
            )
    if base:
        ratio = result["ratio_now_over_baseline"]
        print("ratio now/baseline: " + ", ".join(f"{k} {v:.3f}" for k, v in ratio.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
