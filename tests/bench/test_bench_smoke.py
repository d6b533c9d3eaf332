"""The benchmarks still run and print their JSON contract (no timing is asserted here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kaudit.suites import load_suite

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from per_run import damage_script

BENCH = Path(__file__).resolve().parents[2] / "bench"


def last_json(*args: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, *args, "--json"], capture_output=True, text=True, timeout=600, check=True
    )
    data = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(data, dict)
    return data


def test_per_run_bench_prints_its_contract() -> None:
    """Fails if the bench stopped covering a clean and a damage run of every task, stopped
    timing the tool calls, the record or the ledger claim and append, stopped measuring
    the floor (or added the tools to kaudit's side instead of the floor's), or its kaudit
    runs stopped reaching the ledger (they go through the campaign's own admit /
    run_pipeline / append, and the chain is verified)."""
    data = last_json(str(BENCH / "per_run.py"), "--runs", "1")
    assert {
        "kaudit_ms",
        "baseline_ms",
        "floor_ms",
        "ratio",
        "ratio_max",
        "ratio_over_tasks",
        "ratio_vs_floor",
        "ratio_vs_floor_max",
        "ratio_vs_floor_with_tools",
        "ratio_vs_floor_with_tools_max",
        "worst_vs_floor",
        "per_cell",
    } <= set(data)
    suite = load_suite("builtin")
    damaging = sum(damage_script(task) is not None for task in suite.tasks.values())
    assert damaging >= 24
    assert (data["rows"], data["tasks"], data["cells"], data["damage_cells"]) == (
        11809,
        len(suite.tasks),
        len(suite.tasks) + damaging,
        damaging,
    )
    phases = data["kaudit_phases_ms"]
    assert isinstance(phases, dict)
    assert set(phases) == {"seed", "tools", "snapshot", "diff+label", "record", "ledger"}
    assert data["ledger_records"] == data["cells"]  # one verified record per kaudit run
    per_cell = data["per_cell"]
    assert isinstance(per_cell, list)
    assert sum(cell["changed_rows"] > 0 for cell in per_cell) >= data["damage_cells"]
    for cell in per_cell:  # the tools are added to the floor, never taken from kaudit
        assert cell["floor_with_tools_ms"] > cell["floor_ms"]
        assert cell["ratio_vs_floor_with_tools"] < cell["ratio_vs_floor"]
    worst = max(per_cell, key=lambda cell: cell["ratio_vs_floor"])
    assert data["worst_vs_floor"]["task"] == worst["task"]


def test_per_run_bench_runs_a_cell_back_to_back_when_grouped() -> None:
    """Fails if `--grouped` left a side or a run out (the summary then lacks the cell, or
    the ledger holds fewer records than kaudit runs), or stopped saying it was grouped."""
    data = last_json(
        str(BENCH / "per_run.py"), "--runs", "2", "--grouped", "--task", "itsm/change-cab-gate"
    )
    assert data["grouped"] is True and data["cells"] == 2
    assert data["ledger_records"] == 4
    assert {cell["script"] for cell in data["per_cell"]} == {"oracle", "advance_both"}


def test_bootstrap_bench_runs_small() -> None:
    """Fails if the bench stopped printing its contract, or if kaudit's resampler and the
    pure-Python loop computed different statistics (their means over 2,000 resamples of
    the same pool then disagree by far more than resampling noise)."""
    data = last_json(str(BENCH / "bootstrap.py"), "--resamples", "2000", "--repeats", "1")
    assert (data["cells"], data["runs"], data["resamples"]) == (100, 2128, 2000)
    assert {"kaudit_seconds", "pure_python_seconds", "ratio"} <= set(data)
    means = data["bootstrap_means"]
    assert isinstance(means, dict)
    for name in ("damage_rate", "miss_pair", "miss_event", "safe_4"):
        kaudit, baseline = means["kaudit"][name], means["pure_python"][name]
        assert 0.0 < kaudit < 1.0
        assert abs(kaudit - baseline) < 0.01, name


@pytest.mark.slow
def test_concurrency_bench_runs_small() -> None:
    """Fails if the bench stops reporting its contract (ratio, CPU a reply for the harness,
    the server and the SDK floor, the CPU budget) or its runs stop passing."""
    data = last_json(
        str(BENCH / "concurrency.py"), "--runs", "20", "--latency", "0.01", "--concurrency", "5"
    )
    assert data["runs"] == 20 and data["errored"] == 0 and data["outcomes"] == ["PASS"]
    assert data["replies"] == 60 and data["ideal_s"] == pytest.approx(4 * 3 * 0.01)
    for key in ("ratio", "harness_cpu_ms_per_reply", "sdk_floor_cpu_ms_per_reply", "peak_rss_mb"):
        assert isinstance(data[key], float) and data[key] > 0, key
    assert data["http_backend"] == "aiohttp"
    budget = data["cpu_budget"]
    assert isinstance(budget, dict)
    assert {"utilization", "fifo_bound_ratio", "implied_quiet_ratio_range"} <= set(budget)


@pytest.mark.slow
@pytest.mark.ray
def test_concurrency_bench_compares_ray_with_local() -> None:
    """Fails if the Ray side stops running the same campaign or reporting its overhead."""
    data = last_json(
        *(str(BENCH / "concurrency.py"), "--runs", "20", "--latency", "0.01"),
        *("--concurrency", "5", "--executor", "both"),
    )
    ray = data["ray"]
    assert isinstance(ray, dict) and ray["runs"] == 20 and ray["outcomes"] == ["PASS"]
    assert ray["startup_s"] > 0 and ray["worker_cpu_ms_per_reply"] > 0
    assert isinstance(data["ray_overhead_ms_per_run"], float)


@pytest.mark.slow
@pytest.mark.ray
def test_ledger_writer_bench_records_every_run() -> None:
    """The bench itself checks every run reached the ledger; here its contract is pinned."""
    data = last_json(
        str(BENCH / "ledger_writer.py"), "--records", "200", "--runs", "40", "--workers", "2"
    )
    assert data["sqlite"]["records"] == 200  # type: ignore[index]
    assert data["ray"]["runs"] == data["local"]["runs"] == 40  # type: ignore[index]
    assert {"ledger_records_per_s", "ray_driver_ceiling_runs_per_s"} <= set(data)


def test_planning_bench_prints_its_contract() -> None:
    """The lazy plan's memory must not grow with k; a list's does."""
    data = last_json(str(BENCH / "planning.py"), "--k", "200")
    assert {"list_bytes", "generator_bytes", "generator_bytes_k_1e9", "ratio"} <= set(data)
    tasks = len(load_suite("builtin").tasks)
    assert data["jobs"] == 200 * 2 * tasks  # 2 agents x the built-in tasks x k
    assert data["generator_bytes_k_1e9"] < 100_000 < data["list_bytes"]


def test_monitor_bench_prints_its_contract() -> None:
    """Fails if the monitor bench stopped running, or its two sides disagreed on the deltas
    (the bench asserts they are equal)."""
    data = last_json(str(BENCH / "monitor.py"), "--repeats", "2", "--events", "200")
    assert {"capture_ms", "whole_image_ms", "ratio", "observe_ms_per_event"} <= set(data)
    assert data["rows"] == 11809


@pytest.mark.postgres
def test_postgres_seed_bench_runs_small() -> None:
    from tests.pg import server_url

    data = last_json(str(BENCH / "pg_seed.py"), "--runs", "2", "--url", server_url())
    assert data["rows"] == 11809 and data["runs"] == 2
    assert {"seed", "dump", "cleanup"} <= set(data["postgresql"])  # type: ignore[arg-type]
    assert {"seed", "dump", "cleanup"} <= set(data["postgresql_rollback"])  # type: ignore[arg-type]


def test_served_run_bench_runs_small() -> None:
    """Fails if the served path stops giving the oracle's verdict (the bench compares
    two runs of the same script) or the bench stops printing its contract."""
    data = last_json(str(BENCH / "served_run.py"), "--runs", "3")
    assert {"scripted_ms", "served_ms", "ratio"} <= set(data)
    assert data["outcomes"] == ["PASS"]


def test_diff_scale_bench_finds_every_change_on_every_side() -> None:
    """Each side must report exactly the planted changes, and the headline ratios must be
    the worse of the two kaudit paths.

    Fails if a side silently skips work (e.g. the capture path reading an empty log,
    or sqldiff run without `--primarykey` on a different table), so its timing would
    not be comparable, or if the headline showed only the flattering capture path.
    """
    data = last_json(str(BENCH / "diff_scale.py"), "--rows", "5000", "--repeat", "1")
    found = data["changes_found"]
    assert isinstance(found, dict)
    assert data["expected_changes"] == 50 + 5 + 5
    assert found == dict.fromkeys(("sqldiff", "kaudit_full", "kaudit_capture", "agentrelbench"), 60)
    for suffix in ("", "_cpu"):
        ratio, speedup = "diff_ratio_vs_sqldiff", "diff_speedup_vs_agentrelbench"
        paths = ("_full", "_capture")
        assert data[ratio + suffix] == max(data[ratio + p + suffix] for p in paths)  # type: ignore[type-var]
        assert data[speedup + suffix] == min(data[speedup + p + suffix] for p in paths)  # type: ignore[type-var]


def test_campaign_scale_bench_prints_the_keys_run_all_reads() -> None:
    """Fails if the bench stops printing a key `run_all.py` reads (it would show null), or
    its two reads of the ledger (full records, one pass) stop agreeing on the runs."""
    data = last_json(str(BENCH / "campaign_scale.py"), "--runs", "64", "--repeat", "1")
    read_by_run_all = {"campaign_runs_per_s", "campaign_peak_rss_mb", "report_s", "stats_s"}
    assert read_by_run_all | {"gate_s", "gate_peak_rss_mb"} <= set(data)
    assert (data["runs"], data["tasks"], data["k"]) == (70, 35, 2)
    read = data["read"]
    assert isinstance(read, dict) and {"full_records_cpu_s", "one_pass_cpu_s"} <= set(read)
    ledger = data["ledger"]
    assert isinstance(ledger, dict)
    assert {"tool_calls", "transcript", "verdict"} <= set(ledger["record_fields_bytes_per_run"])


@pytest.mark.postgres
def test_pg_per_run_bench_prints_the_keys_run_all_reads() -> None:
    """Fails if the PostgreSQL bench stops printing a key `run_all.py` reads (it would show
    null), stops measuring one of its sides side by side, or stops naming the clone floor."""
    from tests.pg import server_url

    url = server_url()
    data = last_json(
        str(BENCH / "pg_per_run.py"), "--repeat", "1", "--url", url,
        "--tasks", "itsm/incident-delete-duplicate",
    )  # fmt: skip
    assert {"pg_per_run_ms", "pg_per_run_ms_previous", "pg_speedup_vs_previous"} <= set(data)
    sides = data["sides"]
    assert isinstance(sides, dict)
    assert set(sides) == {"previous", "previous_rollback", "clone", "rollback", "sqlite"}
    assert data["runs_per_batch"] == 2 and data["concurrency"] == 4
    assert {"create_ms", "drop_ms"} <= set(data["floor_clone"])  # type: ignore[arg-type]
