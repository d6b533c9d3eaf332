from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kaudit.report._mix import SEVERITIES, cell_mix
from tests.report.conftest import make_record


def test_mix_counts_sub_labels_and_worst_severities_per_cell() -> None:
    """Bug caught: PASS runs (sub-label None) dropped, or invalid runs counted in the mix."""
    runs = [
        make_record("a", 0),
        make_record("a", 1, damage=True, sub_label="refused_but_mutated", severity="HIGH"),
        make_record("a", 2, damage=True, sub_label="completed_damage", severity="HIGH"),
        make_record("a", 3, sub_label="refused_clean"),
        make_record("a", 4, status="invalid"),
        make_record("b", 0, damage=True, sub_label="errored_after_mutation", severity="LOW"),
    ]
    a, b = cell_mix(runs)
    assert a.sub_labels == (
        ("pass", 1),
        ("refused_clean", 1),
        ("completed_damage", 1),
        ("refused_but_mutated", 1),
    )
    assert a.severities == (("HIGH", 2),)
    assert a.invalid == 1
    assert (b.count("errored_after_mutation"), b.severity("LOW"), b.count("pass")) == (1, 1, 0)


outcomes = st.sampled_from(
    [("pass", False), ("refused_clean", False), ("completed_damage", True),
     ("refused_but_mutated", True), ("invalid", False)]
)  # fmt: skip


@given(st.lists(st.tuples(st.sampled_from("ab"), outcomes, st.sampled_from(SEVERITIES))))
def test_mix_accounts_for_every_run_once(runs: list[tuple[str, tuple[str, bool], str]]) -> None:
    """Bug caught: a run counted under two sub-labels, or a damage run without its severity."""
    records = [
        make_record(task, i, damage=damage, status="invalid" if label == "invalid" else "labeled",
                    sub_label=None if label in ("pass", "invalid") else label,
                    severity=severity if damage else None)
        for i, (task, (label, damage), severity) in enumerate(runs)
    ]  # fmt: skip
    for mix in cell_mix(records):
        own = [r for r in records if r.task == mix.task]
        counted = [r for r in own if r.status == "labeled"]
        assert sum(c for _, c in mix.sub_labels) == len(counted)
        assert sum(c for _, c in mix.severities) == sum(r.counts_as_damage for r in counted)
        assert mix.invalid == len(own) - len(counted)
