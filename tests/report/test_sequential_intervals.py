"""Sequentially stopped cells are reported with anytime-valid intervals; fixed-k cells keep CP."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from kaudit.cli.main import app
from kaudit.harness import StoppingRule
from kaudit.report._cells import FIXED_K_METHOD, certified_interval
from kaudit.stats import beta_binomial_cs, clopper_pearson
from kaudit.stats._sequence import CS_METHOD
from tests.conftest import FIXTURES

ALPHA = 0.05
runner = CliRunner()


@cache
def _interval(damage: int, n: int, sequential: bool) -> tuple[float, float, str]:
    return certified_interval(damage, n, ALPHA, sequential)


@cache
def _cached_rule(rule: StoppingRule) -> Callable[[int, int], bool]:
    """The rule's own `is_done`, memoised per (damage, n): the simulation asks it 10^5 times."""
    return cache(rule.is_done)


def _miss_rate(p: float, seed: int, cells: int, sequential: bool, rule: StoppingRule) -> float:
    """Run `cells` seeded cells of true damage rate p under the rule; share whose reported
    interval misses p. The rule is the harness's own `StoppingRule.is_done`."""
    rng = np.random.default_rng(seed)
    is_done = _cached_rule(rule)
    missed = 0
    for _ in range(cells):
        draws = rng.random(rule.max_k) < p
        damage = n = 0
        while not is_done(damage, n):
            damage += bool(draws[n])
            n += 1
        low, high, _ = _interval(damage, n, sequential)
        missed += not low <= p <= high
    return missed / cells


@pytest.mark.parametrize("p", [0.03, 0.08, 0.1, 0.12, 0.2, 0.4])
def test_until_reported_interval_misses_true_p_at_most_alpha(p: float) -> None:
    """Over 1,500 seeded cells per p stopped by `--until upper<0.1` (max k 200), the
    reported interval misses the true p at most alpha of the time. Fails if a stopped
    cell were reported with Clopper-Pearson (see the control below)."""
    rule = StoppingRule(max_k=200, upper_below=0.1, alpha=ALPHA)
    assert _miss_rate(p, int(p * 1000), 1500, True, rule) <= ALPHA


def test_control_clopper_pearson_after_early_stopping_misses_more_than_alpha() -> None:
    """The control: a rule that re-checks CP and reports CP misses p = 0.1 about 10% of the
    time, so the test above can tell the two apart."""

    @dataclass(frozen=True)
    class CpRule(StoppingRule):
        def is_done(self, damage: int, n: int) -> bool:
            return n >= self.max_k or (n > 0 and clopper_pearson(damage, n)[1] < 0.1)

    rule = CpRule(max_k=200, upper_below=0.1, alpha=ALPHA)
    assert _miss_rate(0.1, 100, 1500, False, rule) > ALPHA


def test_certified_interval_names_its_method() -> None:
    """Fails if a sequential cell silently got the fixed-k interval or the other way round."""
    assert certified_interval(1, 1, ALPHA, False) == (*clopper_pearson(1, 1), FIXED_K_METHOD)
    assert certified_interval(1, 1, ALPHA, True) == (*beta_binomial_cs(1, 1), CS_METHOD)


def _run(ledger: Path, campaign: str, *extra: str) -> None:
    args = ["run", "--suite", str(FIXTURES / "mini_suite"), "--agent", "scripted:close_both"]
    result = runner.invoke(app, [*args, "--ledger", str(ledger), "--campaign", campaign, *extra])
    assert result.exit_code == 0, result.output


def test_report_and_stats_show_anytime_intervals_for_until_cells_only(tmp_path: Path) -> None:
    """A `--until damage` campaign stops at 1/1; report and stats must show the anytime
    interval for it and say so, and CP for a fixed-k campaign. Fails if either command
    ignored the manifest's stopping rule, or the HTML page showed CP for the sequential cell."""
    seq, fixed = tmp_path / "seq.sqlite", tmp_path / "fixed.sqlite"
    _run(seq, "seq", "--k", "20", "--until", "damage")
    _run(fixed, "fix", "--k", "1")
    for ledger, method, interval in (
        (seq, CS_METHOD, beta_binomial_cs(1, 1)),
        (fixed, FIXED_K_METHOD, clopper_pearson(1, 1)),
    ):
        report = json.loads(runner.invoke(app, ["report", str(ledger), "--json"]).output)
        (cell,) = report["cells"]
        assert (cell["n"], cell["damage"], cell["interval"]) == (1, 1, method)
        assert (cell["ci_low"], cell["ci_high"]) == pytest.approx(interval)
        stats = json.loads(
            runner.invoke(app, ["stats", str(ledger), "--json", "--bootstrap", "10"]).output
        )
        (row,) = stats["cells"]
        assert row["ci_low"] == pytest.approx(interval[0])
        assert row["interval"] == (CS_METHOD if ledger == seq else "clopper-pearson")
    text = runner.invoke(app, ["report", str(seq)]).output
    assert "[0.025, 1.000]†" in text and "anytime-valid interval" in text
    assert "†" not in runner.invoke(app, ["report", str(fixed)]).output
    assert "anytime-valid" in runner.invoke(app, ["stats", str(seq), "--bootstrap", "10"]).output

    html = tmp_path / "seq.html"
    assert runner.invoke(app, ["report", str(seq), "--html", str(html)]).exit_code == 0
    page = html.read_text()
    assert f"[0.025, 1.000] † {CS_METHOD}" in page
    fixed_html = tmp_path / "fixed.html"
    assert runner.invoke(app, ["report", str(fixed), "--html", str(fixed_html)]).exit_code == 0
    assert CS_METHOD not in fixed_html.read_text()


def test_a_task_in_two_versions_keeps_the_anytime_interval_on_its_sequential_cell(
    tmp_path: Path,
) -> None:
    """The same task stopped by `--until` in one campaign and run fixed-k with faults (another
    task version, so cells `task@digest8`) in another: stats, report, its outcome mix and
    the HTML page must all keep the two cells apart. Fails if the sequential cells are
    matched by bare (model, task) (stats then gave the sequential cell Clopper-Pearson),
    or if the mix is keyed by (model, task) (the HTML page raised KeyError, the terminal
    mix merged the versions)."""
    ledger = tmp_path / "two.sqlite"
    _run(ledger, "seq", "--k", "20", "--until", "damage")
    _run(ledger, "fix", "--k", "2", "--faults", "fail_before_commit:0.5")
    stats = json.loads(
        runner.invoke(app, ["stats", str(ledger), "--json", "--bootstrap", "10"]).output
    )
    by_n = {row["n"]: row for row in stats["cells"]}
    assert set(by_n) == {1, 2} and all("@" in row["task"] for row in by_n.values())
    assert (by_n[1]["interval"], by_n[2]["interval"]) == (CS_METHOD, "clopper-pearson")
    report = json.loads(runner.invoke(app, ["report", str(ledger), "--json"]).output)
    assert sorted((c["n"], c["interval"]) for c in report["cells"]) == [
        (1, CS_METHOD),
        (2, FIXED_K_METHOD),
    ]
    from kaudit.ledger import Ledger
    from kaudit.report._mix import cell_mix

    with Ledger(ledger, readonly=True) as opened:
        mix = cell_mix(opened.records())
    assert sorted(m.task for m in mix) == sorted(c["task"] for c in report["cells"])
    assert sorted(sum(n for _, n in m.sub_labels) for m in mix) == [1, 2]
    html = tmp_path / "two.html"
    result = runner.invoke(app, ["report", str(ledger), "--html", str(html)])
    assert result.exit_code == 0, result.output


def test_a_forged_manifest_cannot_turn_a_sequential_cell_into_a_fixed_k_one(
    tmp_path: Path,
) -> None:
    """The manifest sits outside the hash chain: rewriting its stopping rule to a fixed k
    must leave the anytime-valid interval (and the rule line) as the chained records say.
    Fails if report, stats or monitor read the rule from the manifest again (the forged
    rule then narrowed the interval to Clopper-Pearson with every check passing)."""
    import sqlite3

    ledger = tmp_path / "seq.sqlite"
    _run(ledger, "seq", "--k", "20", "--until", "damage")
    with sqlite3.connect(ledger) as conn:
        manifest = json.loads(conn.execute("SELECT manifest FROM campaigns").fetchone()[0])
        manifest["stopping_rule"] = {"kind": "fixed", "k": 1, "text": "fixed: k = 1 runs per cell"}
        conn.execute("UPDATE campaigns SET manifest = ?", (json.dumps(manifest),))
    report = json.loads(runner.invoke(app, ["report", str(ledger), "--json"]).output)
    (cell,) = report["cells"]
    assert cell["interval"] == CS_METHOD
    assert report["stopping_rules"]["seq"].startswith("sequential")
    stats = json.loads(
        runner.invoke(app, ["stats", str(ledger), "--json", "--bootstrap", "10"]).output
    )
    assert stats["cells"][0]["interval"] == CS_METHOD
    from kaudit.monitor._audit import read_audit

    [audited] = read_audit(ledger).values()
    assert audited.interval == CS_METHOD
