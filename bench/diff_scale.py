"""Diff at scale: kaudit's labeler diff beside `sqldiff --primarykey` and AgentRelBench.

Two SQLite files hold one table of N rows (default 1,000,000) before and after a change
of 1% updated, 0.1% inserted and 0.1% deleted rows. Each side produces the full list of
row changes from the two files on disk:

- `sqldiff --primarykey` (Debian package `sqlite3-tools`), output to /dev/null;
- kaudit `diff_images` on the two files' bytes, without change capture (the full diff
  inside SQLite) and with it (the final file was changed under the capture triggers);
- AgentRelBench's published approach: `SELECT *` of both files into dicts, then its
  `labeler.label_run` (dump time included).

Each side runs `--repeat` times, interleaved in one process; medians are compared, of
wall-clock time (the contract) and of CPU time (steadier on a shared machine; sqldiff's
is its child-process time). The headline keys `diff_ratio_vs_sqldiff` and
`diff_speedup_vs_agentrelbench` are the worse of the two kaudit paths; `_full` and
`_capture` name each path.

    python bench/diff_scale.py [--rows 1000000] [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kaudit.label.diff import diff_images
from kaudit.substrate._capture import install_change_capture

_SCHEMA = "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, qty INTEGER, price REAL)"


def build_pair(folder: Path, rows: int, *, capture: bool, seed: int = 7) -> tuple[Path, Path]:
    """The before and after files; with `capture`, the change ran under the triggers."""
    rng = random.Random(seed)
    before = folder / f"before-{int(capture)}.sqlite"
    after = folder / f"after-{int(capture)}.sqlite"
    conn = sqlite3.connect(before)
    conn.execute(_SCHEMA)
    conn.executemany(
        "INSERT INTO items VALUES (?, ?, ?, ?)",
        ((i, f"item-{i}", i % 97, round(i * 0.25, 2)) for i in range(1, rows + 1)),
    )
    if capture:
        install_change_capture(conn)
    conn.commit()
    conn.close()
    shutil.copyfile(before, after)
    conn = sqlite3.connect(after)
    conn.execute("PRAGMA recursive_triggers = ON")
    ids = rng.sample(range(1, rows + 1), rows // 100 + rows // 1000)
    updated, deleted = ids[: rows // 100], ids[rows // 100 :]
    conn.executemany("UPDATE items SET qty = qty + 1 WHERE id = ?", ((i,) for i in updated))
    conn.executemany("DELETE FROM items WHERE id = ?", ((i,) for i in deleted))
    conn.executemany(
        "INSERT INTO items VALUES (?, ?, 1, 1.0)",
        ((rows + i, f"new-{i}") for i in range(1, rows // 1000 + 1)),
    )
    conn.commit()
    conn.close()
    return before, after


def sqldiff(before: Path, after: Path) -> int:
    """Lines of SQL sqldiff prints: one per changed row."""
    out = subprocess.run(
        ["sqldiff", "--primarykey", str(before), str(after)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return out.count("\n")


def kaudit_diff(before: Path, after: Path, *, fast: bool) -> int:
    """Row changes kaudit's labeler finds, reading both files from disk."""
    return len(diff_images(before.read_bytes(), after.read_bytes(), fast=fast))


def select_all(path: Path) -> dict[str, list[dict[str, Any]]]:
    conn = sqlite3.connect(path)
    cursor = conn.execute("SELECT id, name, qty, price FROM items")
    names = [c[0] for c in cursor.description]
    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    conn.close()
    return {"items": rows}


def agentrelbench_diff(before: Path, after: Path) -> int:
    """Deltas of the published pipeline: full dumps into dicts, then its labeler."""
    from agentrelbench import labeler as arb

    spec = arb.DamageSpec.from_task([], [], {})
    verdict = arb.label_run(
        select_all(before), select_all(after), spec, {}, {"items": "id"}, arb.RunMeta()
    )
    return len(verdict.damage.deltas)


def timed(fn: Callable[[], int]) -> tuple[float, float, int]:
    """Wall-clock and CPU seconds of `fn` (this process's and its children's), its count."""
    start, cpu = time.perf_counter(), _cpu()
    found = fn()
    return time.perf_counter() - start, _cpu() - cpu, found


def _cpu() -> float:
    own, children = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def ratios(medians: dict[str, float], suffix: str = "") -> dict[str, float]:
    """Ratios of medians: kaudit / sqldiff (lower is better), AgentRelBench / kaudit."""
    full, capture = medians["kaudit_full"], medians["kaudit_capture"]
    sqldiff, baseline = medians["sqldiff"], medians["agentrelbench"]
    return {
        f"diff_ratio_vs_sqldiff{suffix}": max(full, capture) / sqldiff,
        f"diff_ratio_vs_sqldiff_full{suffix}": full / sqldiff,
        f"diff_ratio_vs_sqldiff_capture{suffix}": capture / sqldiff,
        f"diff_speedup_vs_agentrelbench{suffix}": baseline / max(full, capture),
        f"diff_speedup_vs_agentrelbench_full{suffix}": baseline / full,
        f"diff_speedup_vs_agentrelbench_capture{suffix}": baseline / capture,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if shutil.which("sqldiff") is None:
        raise SystemExit("sqldiff is missing: apt-get install -y sqlite3-tools")
    with tempfile.TemporaryDirectory() as tmp:
        plain = build_pair(Path(tmp), args.rows, capture=False)
        captured = build_pair(Path(tmp), args.rows, capture=True)
        sides: dict[str, Callable[[], int]] = {
            "sqldiff": lambda: sqldiff(*plain),
            "kaudit_full": lambda: kaudit_diff(*plain, fast=False),
            "kaudit_capture": lambda: kaudit_diff(*captured, fast=True),
            "agentrelbench": lambda: agentrelbench_diff(*plain),
        }
        seconds: dict[str, list[float]] = {name: [] for name in sides}
        cpu: dict[str, list[float]] = {name: [] for name in sides}
        found: dict[str, int] = {}
        for _ in range(args.repeat):
            for name, fn in sides.items():
                elapsed, used, found[name] = timed(fn)
                seconds[name].append(elapsed)
                cpu[name].append(used)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    cpu_medians = {name: statistics.median(values) for name, values in cpu.items()}
    expected = args.rows // 100 + 2 * (args.rows // 1000)
    result: dict[str, Any] = {
        "rows": args.rows,
        "expected_changes": expected,
        "changes_found": found,
        "seconds": medians,
        "cpu_seconds": cpu_medians,
        **ratios(medians),
        **ratios(cpu_medians, "_cpu"),
    }
    print(f"{args.rows:,} rows; {expected:,} changed rows; medians of {args.repeat} in seconds")
    print(f"  {'side':<16}{'wall':>8}{'cpu':>8}")
    for name, value in medians.items():
        print(f"  {name:<16}{value:>8.3f}{cpu_medians[name]:>8.3f}   ({found[name]:,} changes)")
    for suffix, label in (("", "wall"), ("_cpu", "cpu")):
        ratio, speedup = "diff_ratio_vs_sqldiff_", "diff_speedup_vs_agentrelbench_"
        print(
            f"{label}: kaudit/sqldiff = {result[ratio + 'full' + suffix]:.2f} (full), "
            f"{result[ratio + 'capture' + suffix]:.2f} (capture); "
            f"agentrelbench/kaudit = {result[speedup + 'full' + suffix]:.1f}x (full), "
            f"{result[speedup + 'capture' + suffix]:.1f}x (capture)"
        )
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
