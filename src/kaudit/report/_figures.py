"""The report's figures, drawn with matplotlib's SVG backend from the library's statistics.

Each function takes statistics already computed by :mod:`kaudit.stats` and returns one
SVG document; nothing here estimates anything. Text stays text in the SVG (searchable,
testable), and the output is deterministic: fixed hash salt, no date metadata.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from kaudit.report._mix import SEVERITIES, CellMix
from kaudit.report._palette import HEATMAP_CMAP, SEVERITY_STYLE, lightness, series_style
from kaudit.stats import CellStats, Gradient, all_clean_probability, runs_to_detect

__all__ = ["decay_svg", "forest_svg", "gradient_svg", "heatmap_svg", "severity_svg"]


def _svg(fig: Figure) -> str:
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "kaudit"}):
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buffer.getvalue()


def _legend_outside(ax: Any, **options: Any) -> None:
    """The legend to the right of the axes, where it can never cover a bar, curve or marker."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=7,
              title_fontsize=7, **options)  # fmt: skip


def _legend_below(ax: Any, columns: int, **options: Any) -> None:
    """The legend under the axes and their x label, for a panel with a neighbour at its right."""
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), borderaxespad=0.0, fontsize=7,
              title_fontsize=7, ncol=columns, **options)  # fmt: skip


def _models(cells: Sequence[CellStats]) -> list[str]:
    return sorted({c.tally.model for c in cells})


def forest_svg(cells: Sequence[CellStats], eps: float, alpha: float) -> str:
    """Per-cell p̂ with its exact interval; the band is where a cell counts as stochastic.

    A filled marker is a demonstrably stochastic cell (its whole interval inside the band,
    :func:`kaudit.stats.is_stochastic`); a hollow one is not.
    """
    models = _models(cells)
    tasks = sorted({c.tally.task for c in cells})
    fig = Figure(figsize=(7, 1.4 + 0.32 * len(tasks)))
    ax = fig.add_subplot()
    ax.axvspan(eps, 1 - eps, color="#dddddd", zorder=0)
    step = 0.7 / max(len(models), 1)
    for i, model in enumerate(models):
        colour, marker, _ = series_style(i)
        own = sorted((c for c in cells if c.tally.model == model), key=lambda c: c.tally.task)
        ax.errorbar([], [], fmt=marker, color=colour, markersize=4, label=model)
        for stochastic in (True, False):
            part = [c for c in own if c.stochastic is stochastic]
            ax.errorbar(
                [c.phat for c in part],
                [tasks.index(c.tally.task) - 0.35 + step * (i + 0.5) for c in part],
                xerr=[[c.phat - c.ci_low for c in part], [c.ci_high - c.phat for c in part]],
                fmt=marker,
                color=colour,
                ecolor=colour,
                markerfacecolor=colour if stochastic else "white",
                capsize=2,
                markersize=4,
            )
    ax.set_yticks(range(len(tasks)))
    ax.set_yticklabels(tasks)
    ax.set_ylim(len(tasks) - 0.5, -0.5)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel(f"damage rate p̂ with exact {1 - alpha:.0%} Clopper-Pearson interval")
    ax.set_ylabel("task (one marker per model)")
    handles, _ = ax.get_legend_handles_labels()
    band = Patch(facecolor="#dddddd", label=f"stochastic band ({eps:g}, {1 - eps:g})")
    hollow = Line2D([], [], marker="o", color="black", markerfacecolor="white", linestyle="",
                    label="hollow: interval not inside the band")  # fmt: skip
    _legend_outside(ax, handles=[*handles, band, hollow])
    ax.set_title("Damage per cell against the demonstrably-stochastic band")
    return _svg(fig)


def heatmap_svg(cells: Sequence[CellStats]) -> str:
    """Model × task grid of p̂, each square annotated with x/n."""
    models = _models(cells)
    tasks = sorted({c.tally.task for c in cells})
    grid = [[math.nan] * len(models) for _ in tasks]
    text: dict[tuple[int, int], str] = {}
    for c in cells:
        i, j = tasks.index(c.tally.task), models.index(c.tally.model)
        grid[i][j] = c.phat
        text[(i, j)] = f"{c.tally.damage}/{c.tally.n}"
    fig = Figure(figsize=(2.6 + 1.3 * len(models), 1.2 + 0.24 * len(tasks)))
    ax = fig.add_subplot()
    cmap = matplotlib.colormaps[HEATMAP_CMAP]
    image = ax.imshow(grid, cmap=cmap, vmin=0, vmax=1, aspect="auto")
    for (i, j), label in text.items():
        shade = matplotlib.colors.to_hex(cmap(grid[i][j]))
        ax.text(j, i, label, ha="center", va="center", fontsize=7,
                color="white" if lightness(shade) < 55 else "black")  # fmt: skip
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels(models, rotation=20, ha="right")
    ax.set_yticks(range(len(tasks)))
    ax.set_yticklabels(tasks)
    ax.set_xlabel("model")
    ax.set_ylabel("task")
    bar = fig.colorbar(image, ax=ax)
    bar.set_label("damage rate p̂ (x/n in each square)")
    ax.set_title("Damage rate by model and task")
    return _svg(fig)


def decay_svg(cells: Sequence[CellStats], detect: float, limit: int = 8) -> str:
    """Chance that k audit runs all look clean, one curve per damage rate seen in the cells.

    Each curve is ``(1 − p̂)**k`` (:func:`all_clean_probability`), so cells with the same
    p̂ share it; its marker sits at the k that sees the damage with probability `detect`
    (:func:`runs_to_detect`). The `limit` lowest rates are drawn: rare damage is what
    audits miss.
    """
    damaging = [c for c in cells if c.tally.damage > 0]
    rates: dict[float, list[CellStats]] = {}
    for c in damaging:
        rates.setdefault(c.phat, []).append(c)
    shown = sorted(rates)[:limit]
    needed = [runs_to_detect(p, 1 - detect) for p in shown]
    top = max([10, *needed]) + 2
    fig = Figure(figsize=(7, 4))
    ax = fig.add_subplot()
    ks = list(range(top + 1))
    for i, (p, k_star) in enumerate(zip(shown, needed, strict=True)):
        colour, marker, _ = series_style(i)
        style = ("-", "--", ":", "-.")[i % 4]
        group = rates[p]
        who = group[0].tally.task if len(group) == 1 else f"{len(group)} cells"
        ax.plot(ks, [all_clean_probability(p, k) for k in ks], style, color=colour,
                label=f"p̂ = {p:.3f}, k = {k_star} ({who})")  # fmt: skip
        ax.plot([k_star], [all_clean_probability(p, k_star)], marker, color=colour,
                markersize=7)  # fmt: skip
    ax.axhline(1 - detect, color="#555555", linewidth=0.8)
    ax.text(top, 1 - detect, f"miss = {1 - detect:.2f} ", va="bottom", ha="right", fontsize=7)
    ax.set_xlim(0, top)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("audit runs k")
    ax.set_ylabel("P(all k runs look clean)")
    ax.set_title(
        f"Audit decay of {len(damaging)} damage-producing cells; marker = k for "
        f"{detect:.0%} detection"
    )
    if shown:
        _legend_outside(ax, title="damage rate, runs needed")
    return _svg(fig)


def severity_svg(mix: Sequence[CellMix], dollars: Mapping[tuple[str, str], float]) -> str:
    """Damage runs per severity (stacked per model) and damage dollars per task."""
    models = sorted({m.model for m in mix})
    fig = Figure(figsize=(9, 1.8 + 0.25 * max(len(models), 8)))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.3]})
    start = [0] * len(models)
    for level in SEVERITIES:
        counts = [sum(m.severity(level) for m in mix if m.model == model) for model in models]
        colour, hatch = SEVERITY_STYLE[level]
        left.barh(models, counts, left=start, color=colour, hatch=hatch, edgecolor="black",
                  label=level)  # fmt: skip
        start = [a + b for a, b in zip(start, counts, strict=True)]
    left.set_xlabel("damage runs")
    left.set_ylabel("model")
    left.set_title("Worst severity of each damage run")
    _legend_below(left, len(SEVERITIES), title="severity")
    tasks = sorted({task for (_, task), d in dollars.items() if d > 0})
    height = 0.8 / max(len(models), 1)
    for j, model in enumerate(models):
        colour, _, hatch = series_style(j)
        values = [dollars.get((model, task), 0.0) for task in tasks]
        ys = [i + j * height for i in range(len(tasks))]
        right.barh(ys, values, height=height, color=colour, hatch=hatch, edgecolor="black",
                   label=model)  # fmt: skip
    right.set_yticks([i + 0.4 - height / 2 for i in range(len(tasks))])
    right.set_yticklabels(tasks)
    right.invert_yaxis()
    right.set_xlabel("damage dollars (sum over runs)")
    right.set_ylabel("task")
    right.set_title("Damage dollars by task")
    if tasks:
        _legend_below(right, min(len(models), 3), title="model")
    fig.tight_layout()
    return _svg(fig)


def gradient_svg(gradient: Gradient) -> str:
    """Damage-producing tasks per model in the declared order, with Spearman's rho."""
    fig = Figure(figsize=(6, 3))
    ax = fig.add_subplot()
    for j, (model, count) in enumerate(zip(gradient.models, gradient.counts, strict=True)):
        colour, _, hatch = series_style(j)
        ax.bar([j], [count], color=colour, hatch=hatch, edgecolor="black", label=model)
    ax.set_xticks(range(len(gradient.models)))
    ax.set_xticklabels(gradient.models, rotation=15, ha="right")
    ax.set_xlabel("model, in the declared capability order")
    ax.set_ylabel("damage-producing tasks")
    rho = "undefined" if gradient.spearman is None else f"{gradient.spearman:.2f}"
    ci = "" if gradient.ci is None else f" [{gradient.ci[0]:.2f}, {gradient.ci[1]:.2f}]"
    ax.set_title(f"Capability gradient: Spearman rho = {rho}{ci}")
    _legend_outside(ax, title="model")
    return _svg(fig)
