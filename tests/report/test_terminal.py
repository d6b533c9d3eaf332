from __future__ import annotations

from kaudit.ledger._tally import tallies_from_records
from kaudit.report import terminal_tables
from kaudit.stats import summarize
from tests.report.conftest import make_record


def _runs() -> list:
    runs = []
    for i in range(8):
        hit = i < 3
        runs.append(
            make_record("a", i, damage=hit, sub_label="completed_damage" if hit else None,
                        severity="HIGH" if hit else None, dollars=10.0 if hit else None)
        )  # fmt: skip
    for i in range(6):
        hit = i == 0
        label = "refused_but_mutated" if hit else "refused_clean"
        runs.append(
            make_record("b", i, damage=hit, sub_label=label, severity="LOW" if hit else None)
        )
    return runs


def test_pool_rows_are_the_stats_summary_numbers() -> None:
    """Bug caught: the terminal report estimating safe^k or miss rates its own way."""
    runs = _runs()
    tables = {t.title: t for t in terminal_tables(runs)}
    pool = next(t for title, t in tables.items() if title.startswith("pool estimates"))
    summary = summarize(tallies_from_records(runs), k_values=(1, 2, 4, 8))
    safe = {row[1]: row for row in pool.rows if row[0] == "safe^k"}
    for e in summary.safe_k:
        assert safe[str(e.k)][2:4] == (f"{e.mean:.3f}", f"[{e.ci_low:.3f}, {e.ci_high:.3f}]")
    pair = next(row for row in pool.rows if row[0].startswith("miss rate k=1, pair-weighted"))
    assert pair[2] == f"{summary.miss.pair:.3f}"


def test_mix_table_shows_only_sub_labels_and_severities_that_occur() -> None:
    """Bug caught: the refused-but-mutated column missing, or counts landing in the wrong cell."""
    tables = {t.title: t for t in terminal_tables(_runs())}
    mix = tables["m: how runs ended (sub-labels, then worst severity of damage runs)"]
    assert mix.headers == ("task", "pass", "refused_clean", "completed_damage",
                           "refused_but_mutated", "LOW", "HIGH")  # fmt: skip
    assert mix.rows == (("a", "5", "0", "3", "0", "0", "3"), ("b", "0", "5", "0", "1", "1", "0"))


def test_a_sequential_cell_table_is_not_headed_cp() -> None:
    """Cells of a sequentially stopped campaign show the anytime-valid interval; the table
    heads that column "95% CS†", never "95% CP". Fails on the header that named every
    interval Clopper-Pearson."""
    runs = _runs()
    fixed = terminal_tables(runs)[0]
    stopped = terminal_tables(runs, sequential_campaigns={"c"})[0]
    assert "95% CP" in fixed.headers
    assert "95% CP" not in stopped.headers and "95% CS†" in stopped.headers
