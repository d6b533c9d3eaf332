from __future__ import annotations

from kaudit.report import cell_mix
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
