from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from kaudit.errors import InputError, KauditError
from kaudit.ledger import Ledger
from kaudit.report import HtmlOptions, html_report
from kaudit.report._viewer import unpacked_runs
from tests.conftest import FIXTURES
from tests.report.conftest import make_record, reference_ledger


@pytest.fixture(scope="module")
def mini_records(tmp_path_factory: pytest.TempPathFactory) -> list:
    path = tmp_path_factory.mktemp("html") / "audit.sqlite"
    reference_ledger(path, ("reference", "scripted:delete_held"), 6, str(FIXTURES / "mini_suite"))
    with Ledger(path) as ledger:
        return list(ledger.records())


def test_page_is_self_contained_with_every_section(mini_records: list) -> None:
    """Bug caught: a CDN script or font, or a section silently left out of the page."""
    page = html_report(mini_records, HtmlOptions(bootstrap=100))
    assert re.search(r'(src|href)="(https?:)?//', page) is None
    assert "@import" not in page and "url(http" not in page
    ids = re.findall(r'<figure id="(fig-[a-z]+)">', page)
    assert ids == ["fig-forest", "fig-heatmap", "fig-decay", "fig-severity", "fig-gradient"]
    for heading in ("Cells", "safe^k, pass^k and audit miss rates", "Transcript vs state",
                    "Economics", "Run viewer"):  # fmt: skip
        assert f">{heading}</h2>" in page
    runs = unpacked_runs(page)
    assert len(runs) == len(mini_records) == 12
    # The labeler's sub-label is the independent truth for "declared a refusal but mutated".
    flagged = sum(r.sub_label == "refused_but_mutated" for r in mini_records)
    assert sum(run["flag"] for run in runs) == flagged >= 6


def test_figures_are_svg_documents_inlined_as_data_uris(mini_records: list) -> None:
    """Bug caught: a figure written to a side file the single page cannot carry."""
    page = html_report(mini_records, HtmlOptions(bootstrap=100))
    uris = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page)
    assert len(uris) == 5
    assert all(base64.b64decode(u).decode().lstrip().startswith("<?xml") for u in uris)


def test_one_model_has_no_gradient_and_numbers_match_the_stats(mini_records: list) -> None:
    """Bug caught: the report recomputing p̂ or intervals differently from kaudit.stats."""
    from kaudit.ledger._tally import tallies_from_records
    from kaudit.stats import clopper_pearson

    one = [r for r in mini_records if r.model == "simulated:scripted:delete_held"]
    page = html_report(one, HtmlOptions(bootstrap=100))
    assert "fig-gradient" not in page
    (tally,) = tallies_from_records(one)
    low, high = clopper_pearson(tally.damage, tally.n)
    assert f"<td>[{low:.3f}, {high:.3f}]</td>" in page


def test_nothing_counted_is_an_error_not_an_empty_page() -> None:
    """Bug caught: an all-INVALID ledger rendering NaN figures without a word."""
    with pytest.raises(KauditError, match="no counted run"):
        html_report([make_record("t", 0, status="invalid")])


def test_model_order_must_name_ledger_models(mini_records: list) -> None:
    """Bug caught: a typo in --model-order raising ValueError from the gradient."""
    with pytest.raises(InputError, match=r"^`model_order` must name >= 2 distinct models"):
        html_report(mini_records, HtmlOptions(model_order=("simulated:reference", "typo")))


def test_rendering_is_deterministic(mini_records: list, tmp_path: Path) -> None:
    """Bug caught: dates or random ids in the SVG making every report differ from the last."""
    options = HtmlOptions(bootstrap=100)
    assert html_report(mini_records, options) == html_report(mini_records, options)


@pytest.mark.agentrelbench
def test_published_dev_pool_reproduces_the_published_miss_rate(tmp_path: Path) -> None:
    """Bug caught: the page's miss rate computed its own way instead of by kaudit.stats
    (the published pair-weighted k=1 miss rate of the dev pool is 0.798)."""
    from kaudit.ledger._agentrelbench import read_agentrelbench_verdicts
    from kaudit.ledger._import import import_runs
    from tests.stats.arb_data import DEV_FILES, dev_files

    with Ledger(tmp_path / "arb.sqlite") as ledger:
        for model, path in dev_files().items():
            import_runs(ledger, read_agentrelbench_verdicts(path, model))
        records = list(ledger.records())
    page = html_report(records, HtmlOptions(bootstrap=200, model_order=tuple(DEV_FILES)))
    assert "Cells that showed damage: 13." in page
    assert "misses the damage 0.798 of the time (pair-weighted" in page
    assert "a lower bound" in page
    assert 'id="fig-gradient"' in page
    runs = unpacked_runs(page)
    assert len(runs) == 640
    assert "640 runs kept no words of the agent" in page
    flagged = sum(r.sub_label == "refused_but_mutated" for r in records)
    assert sum(run["flag"] for run in runs) == flagged > 0


def test_a_real_runs_allowed_change_is_shown_beside_its_damage(mini_records: list) -> None:
    """Bug caught: the labeler's allowed changes never reaching the ledger, so the viewer's
    diff table could only ever show damage (the oracle closes ACC_002, which is allowed)."""
    page = html_report(mini_records, HtmlOptions(bootstrap=50))
    rows = [tuple(row) for run in unpacked_runs(page) for row in run["diff"]]
    allowed = ("account", "id=ACC_002", "status", '"open"', '"closed"', "allowed", "", "")
    assert allowed in rows
    assert any(row[:3] == ("account", "id=ACC_004", "(removed row)") and row[5] == "damage"
               for row in rows)  # fmt: skip


def test_the_page_of_a_read_ledger_is_the_page_of_its_records(tmp_path: Path) -> None:
    """Fails if `Report.write_html` (the verified read's counts, the viewer fed from each
    record's stored JSON) and `html_report` over the same records give different pages:
    a run shown or counted twice, a value changed on its way through the JSON."""
    from kaudit import read

    path = reference_ledger(tmp_path / "a.sqlite", ("reference", "scripted:delete_held"), 3,
                            str(FIXTURES / "mini_suite"))  # fmt: skip
    report = read(path)
    written = report.write_html(tmp_path / "r.html").read_text()
    with Ledger(path) as ledger:
        built = html_report(ledger.records(), HtmlOptions(title="kaudit report: a.sqlite"))
    assert written == built
