from __future__ import annotations

import itertools
import re

import matplotlib
import numpy as np

from kaudit.report._figures import decay_svg, forest_svg, gradient_svg, heatmap_svg, severity_svg
from kaudit.report._mix import cell_mix
from kaudit.report._palette import (
    HEATMAP_CMAP,
    SERIES,
    SEVERITY_STYLE,
    heat,
    lightness,
    relative_luminance,
    series_style,
)
from kaudit.stats import CellTally, capability_gradient, summarize
from tests.report.conftest import make_record

TALLIES = [
    CellTally("model-a", "t1", 8, 1, 1, 6),
    CellTally("model-a", "t2", 8, 4, 4, 3),
    CellTally("model-b", "t1", 8, 0, 0, 8),
    CellTally("model-b", "t2", 8, 2, 2, 5),
]


def _texts(svg: str) -> list[str]:
    return [re.sub(r"\s+", " ", t).strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def test_series_colours_differ_in_grayscale_and_markers_never_repeat() -> None:
    """Bug caught: two series that print as the same grey (e.g. red and green of equal L*)."""
    for (a, _, _), (b, _, _) in itertools.combinations(SERIES, 2):
        assert abs(lightness(a) - lightness(b)) >= 10, (a, b)
    markers = [series_style(i)[1] for i in range(12)]
    assert len(set(markers)) == 12
    hatches = [hatch for _, _, hatch in SERIES]
    assert len(set(hatches)) == len(hatches)


def test_severity_darkens_as_it_rises_and_the_heatmap_is_monotone_in_lightness() -> None:
    """Bug caught: a rainbow colour map whose grey levels go up and down with the rate."""
    levels = [lightness(colour) for colour, _ in SEVERITY_STYLE.values()]
    assert all(a - b >= 10 for a, b in itertools.pairwise(levels))
    shades = [lightness(heat(x)) for x in np.linspace(0, 1, 21)]
    assert all(a > b for a, b in itertools.pairwise(shades))  # darker = more damage


def test_the_heatmap_is_hotter_where_there_is_more_damage() -> None:
    """Fails if no damage is the map's most saturated, eye-catching colour (cividis_r put
    bright yellow on 0) instead of the near-white end, if full damage is not a red, or if
    a square is not painted with its own rate's colour."""
    none, full = (matplotlib.colors.to_rgb(heat(x)) for x in (0.0, 1.0))
    assert min(none) > 0.75  # near white: nothing to look at
    red, green, blue = full
    assert red > 2 * green and red > 2 * blue
    svg = heatmap_svg(summarize(TALLIES, bootstrap=50).cells)
    fills = re.findall(
        r'<rect x="[^"]*" y="[^"]*" width="[^"]*" height="[^"]*" fill="(#[0-9a-f]{6})"', svg
    )
    assert [heat(t.damage / t.n) for t in TALLIES] == fills[:4]


def test_the_heatmap_colours_are_matplotlibs_ylorrd() -> None:
    """Fails if the page's colours drift from the YlOrRd map docs/reports.md names (a stop
    mistyped, or the rate read from the wrong end)."""
    cmap = matplotlib.colormaps[HEATMAP_CMAP]
    for x in np.linspace(0, 1, 41):
        ours = matplotlib.colors.to_rgb(heat(float(x)))
        theirs = matplotlib.colors.to_rgb(cmap(float(x)))
        assert max(abs(a - b) for a, b in zip(ours, theirs, strict=True)) < 3 / 255, x


def test_lightness_matches_known_values() -> None:
    """Bug caught: gamma not linearised before weighting the channels."""
    assert relative_luminance("#ffffff") == 1.0 and lightness("#000000") == 0.0
    assert abs(lightness("#777777") - 50.0) < 0.5


def test_every_figure_has_labelled_axes_title_and_legend() -> None:
    """Bug caught: a figure shipped without axis labels or without its legend entries."""
    summary = summarize(TALLIES, bootstrap=50)
    runs = [
        make_record("t2", i, model="model-a", damage=True, severity=s, dollars=10.0)
        for i, s in enumerate(["LOW", "HIGH"])
    ]
    gradient = capability_gradient(TALLIES, ["model-a", "model-b"], resamples=50)
    figures = {
        "forest": (forest_svg(summary.cells, 0.05, 0.05),
                   ["damage rate p̂ with exact 95% Clopper-Pearson interval", "model-a",
                    "model-b", "stochastic band (0.05, 0.95)",
                    "hollow: interval not inside the band"]),
        "heatmap": (heatmap_svg(summary.cells), ["model", "task", "1/8", "4/8",
                                                  "damage rate p̂ (x/n in each square)"]),
        "decay": (decay_svg(summary.cells, 0.95), ["audit runs k", "P(all k runs look clean)",
                                                    "p̂ = 0.125, k = 23 (t1)"]),
        "severity": (severity_svg(cell_mix(runs), {("model-a", "t2"): 20.0}),
                     ["damage runs", "model", "LOW", "HIGH", "damage dollars (sum over runs)"]),
        "gradient": (gradient_svg(gradient), ["damage-producing tasks",
                                              "model, in the declared capability order"]),
    }  # fmt: skip
    for name, (svg, wanted) in figures.items():
        texts = _texts(svg)
        missing = [w for w in wanted if w not in texts]
        assert missing == [], (name, missing)
        assert svg.count("<svg") == 1
        assert re.search(r'(href|src)="https?:|url\(https?:', svg) is None  # nothing fetched
