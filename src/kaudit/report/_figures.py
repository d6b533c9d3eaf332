"""The report's figures, drawn as SVG from the library's statistics.

Each function takes statistics already computed by :mod:`kaudit.stats` and returns one
SVG document; nothing here estimates anything. Text stays text in the SVG (searchable,
testable), every legend sits outside the plot it explains, and the output is
deterministic. The drawing pieces are in :mod:`kaudit.report._chart`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from kaudit.report._chart import Canvas, Entry, Frame, legend_size, nice_ticks, text_width
from kaudit.report._chart import tick_text as _tick
from kaudit.report._mix import SEVERITIES, CellMix
from kaudit.report._palette import HEATMAP_STOPS, SEVERITY_STYLE, heat, lightness, series_style
from kaudit.stats import all_clean_probability, runs_to_detect
from kaudit.stats._gradient import Gradient
from kaudit.stats._summary import CellStats

__all__ = ["decay_svg", "forest_svg", "gradient_svg", "heatmap_svg", "severity_svg"]

TICK, LABEL, TITLE, KEY = 10.0, 11.0, 12.0, 9.0
"""Font sizes in px: tick labels, axis labels, titles, legends and annotations."""
PAD = 8.0
"""Margin around a figure, in px."""


def _widest(labels: Sequence[str], size: float = TICK) -> float:
    return max((text_width(label, size) for label in labels), default=0.0)


def _rotated_height(labels: Sequence[str], degrees: float) -> float:
    """How far x tick labels turned by `degrees` reach below the axis."""
    turn = math.radians(degrees)
    return _widest(labels) * math.sin(turn) + TICK * math.cos(turn) + 8


def _left(labels: Sequence[str]) -> float:
    """The left margin for a y label and tick labels `labels`."""
    return PAD + LABEL * 1.5 + _widest(labels) + 10


def _labels(
    canvas: Canvas, frame: Frame, title: str, x_label: str, y_label: str, below: float
) -> None:
    """Title over the plot, x label `below` px under it, y label turned at the left edge."""
    half = text_width(title, TITLE) / 2
    middle = min(max(frame.left + frame.width / 2, PAD + half), canvas.width - PAD - half)
    canvas.text(middle, frame.top - TITLE * 0.9, title, TITLE, "middle")
    canvas.text(frame.left + frame.width / 2, frame.bottom + below + LABEL * 0.8, x_label,
                LABEL, "middle")  # fmt: skip
    canvas.text(PAD + LABEL * 0.6, frame.top + frame.height / 2, y_label, LABEL, "middle", -90)


def _size(canvas: Canvas, right: float, bottom: float, title: str) -> None:
    canvas.width = max(right + PAD, text_width(title, TITLE) + 2 * PAD)
    canvas.height = bottom + PAD


def _models(cells: Sequence[CellStats]) -> list[str]:
    return sorted({c.tally.model for c in cells})


def _unit_ticks(canvas: Canvas, frame: Frame) -> None:
    ticks = [i / 5 for i in range(6)]
    canvas.x_ticks(frame, ticks, [f"{t:.1f}" for t in ticks])


def forest_svg(cells: Sequence[CellStats], eps: float, alpha: float) -> str:
    """Per-cell p̂ with its exact interval; the band is where a cell counts as stochastic.

    A filled marker is a demonstrably stochastic cell (its whole interval inside the band,
    :func:`kaudit.stats.is_stochastic`); a hollow one is not.
    """
    models = _models(cells)
    tasks = sorted({c.tally.task for c in cells})
    title = "Damage per cell against the demonstrably-stochastic band"
    entries = [Entry(m, series_style(i)[0], series_style(i)[1]) for i, m in enumerate(models)]
    entries += [
        Entry(f"stochastic band ({eps:g}, {1 - eps:g})", "#dddddd", patch=True),
        Entry("hollow: interval not inside the band", marker="o", filled=False),
    ]
    frame = Frame(_left(tasks), PAD + TITLE * 2, 380, 22 * max(len(tasks), 2),
                  -0.02, 1.02, -0.5, len(tasks) - 0.5)  # fmt: skip
    key_w, key_h = legend_size(entries, "", KEY)
    canvas = Canvas(0, 0)
    below = TICK * 2
    _size(canvas, frame.right + 10 + key_w,
          max(frame.bottom + below + LABEL * 1.6, frame.top + key_h), title)  # fmt: skip
    canvas.frame(frame)
    canvas.rect(frame.x(eps), frame.top, frame.x(1 - eps) - frame.x(eps), frame.height, "#dddddd")
    step = 0.7 / max(len(models), 1)
    for i, model in enumerate(models):
        colour, marker, _ = series_style(i)
        for c in (c for c in cells if c.tally.model == model):
            y = frame.y(tasks.index(c.tally.task) - 0.35 + step * (i + 0.5))
            low, high = frame.x(c.ci_low), frame.x(c.ci_high)
            canvas.line([(low, y), (high, y)], colour, 1.2)
            for end in (low, high):
                canvas.line([(end, y - 3), (end, y + 3)], colour, 1.2)
            fill = colour if c.stochastic else "#fff"
            canvas.marker(marker, frame.x(c.phat), y, 6, fill, colour)
    canvas.end_frame(frame)
    _unit_ticks(canvas, frame)
    canvas.y_ticks(frame, range(len(tasks)), tasks)
    _labels(canvas, frame, title,
            f"damage rate p̂ with exact {1 - alpha:.0%} Clopper-Pearson interval",
            "task (one marker per model)", below)  # fmt: skip
    canvas.legend(frame.right + 10, frame.top, entries, size=KEY)
    return canvas.svg()


def heatmap_svg(cells: Sequence[CellStats]) -> str:
    """Model × task grid of p̂, each square annotated with x/n."""
    models = _models(cells)
    tasks = sorted({c.tally.task for c in cells})
    title = "Damage rate by model and task"
    frame = Frame(_left(tasks), PAD + TITLE * 2, 84 * len(models), 20 * len(tasks),
                  -0.5, len(models) - 0.5, -0.5, len(tasks) - 0.5)  # fmt: skip
    below = _rotated_height(models, 20)
    bar = frame.right + 14
    ticks = [i / 5 for i in range(6)]
    label_x = bar + 12 + 6 + _widest([f"{t:.1f}" for t in ticks]) + 8 + LABEL * 0.6
    canvas = Canvas(0, 0)
    _size(canvas, label_x + LABEL, frame.bottom + below + LABEL * 1.6, title)
    canvas.frame(frame)
    for c in cells:
        i, j = tasks.index(c.tally.task), models.index(c.tally.model)
        shade = heat(c.phat)
        canvas.rect(frame.x(j - 0.5), frame.y(i - 0.5), frame.width / len(models),
                    frame.height / len(tasks), shade)  # fmt: skip
        ink = "#fff" if lightness(shade) < 55 else "#000"
        canvas.text(
            frame.x(j), frame.y(i), f"{c.tally.damage}/{c.tally.n}", KEY, "middle", fill=ink
        )
    canvas.end_frame(frame)
    canvas.x_ticks(frame, range(len(models)), models, rotate=20)
    canvas.y_ticks(frame, range(len(tasks)), tasks)
    _labels(canvas, frame, title, "model", "task", below)
    stops = "".join(
        f'<stop offset="{i / (len(HEATMAP_STOPS) - 1):.3f}" stop-color="{colour}"/>'
        for i, colour in enumerate(HEATMAP_STOPS)
    )
    canvas.defs.append(
        f'<linearGradient id="heat" x1="0" y1="1" x2="0" y2="0">{stops}</linearGradient>'
    )
    scale = Frame(bar, frame.top, 12, frame.height, 0, 1, 1, 0)
    canvas.group("colorbar")
    canvas.rect(scale.left, scale.top, scale.width, scale.height, "url(#heat)", "#000")
    canvas.y_ticks(scale, ticks, [f"{t:.1f}" for t in ticks], right=True)
    canvas.text(label_x, scale.top + scale.height / 2, "damage rate p̂ (x/n in each square)",
                LABEL, "middle", 90)  # fmt: skip
    canvas.end()
    return canvas.svg()


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
    entries = []
    for i, (p, k_star) in enumerate(zip(shown, needed, strict=True)):
        group = rates[p]
        who = group[0].tally.task if len(group) == 1 else f"{len(group)} cells"
        colour, marker, _ = series_style(i)
        entries.append(Entry(f"p̂ = {p:.3f}, k = {k_star} ({who})", colour, marker,
                             line=("-", "--", ":", "-.")[i % 4]))  # fmt: skip
    title = (
        f"Audit decay of {len(damaging)} damage-producing cells; marker = k for "
        f"{detect:.0%} detection"
    )
    key_title = "damage rate, runs needed"
    key_w, key_h = legend_size(entries, key_title, KEY) if entries else (0.0, 0.0)
    frame = Frame(_left(["0.0"]), PAD + TITLE * 2, 400, 240, 0, top, 1.02, 0)
    below = TICK * 2
    canvas = Canvas(0, 0)
    _size(canvas, frame.right + (10 + key_w if entries else 0),
          max(frame.bottom + below + LABEL * 1.6, frame.top + key_h), title)  # fmt: skip
    canvas.frame(frame)
    ks = range(top + 1)
    for (p, k_star), entry in zip(zip(shown, needed, strict=True), entries, strict=True):
        points = [(frame.x(k), frame.y(all_clean_probability(p, k))) for k in ks]
        canvas.line(points, entry.colour, 1.5, entry.line)
        canvas.marker(entry.marker, frame.x(k_star), frame.y(all_clean_probability(p, k_star)),
                      8, entry.colour, entry.colour)  # fmt: skip
    miss = frame.y(1 - detect)
    canvas.line([(frame.left, miss), (frame.right, miss)], "#555555", 0.8)
    canvas.text(frame.right - 4, miss - 3, f"miss = {1 - detect:.2f}", KEY, "end", middle=False)
    canvas.end_frame(frame)
    x_ticks = nice_ticks(0, top, 8)
    canvas.x_ticks(frame, x_ticks, [_tick(k, x_ticks) for k in x_ticks])
    y_ticks = [i / 5 for i in range(6)]
    canvas.y_ticks(frame, y_ticks, [f"{t:.1f}" for t in y_ticks])
    _labels(canvas, frame, title, "audit runs k", "P(all k runs look clean)", below)
    if entries:
        canvas.legend(frame.right + 10, frame.top, entries, key_title, KEY)
    return canvas.svg()


def severity_svg(mix: Sequence[CellMix], dollars: Mapping[tuple[str, str], float]) -> str:
    """Damage runs per severity (stacked per model) and damage dollars per task."""
    models = sorted({m.model for m in mix})
    tasks = sorted({task for (_, task), d in dollars.items() if d > 0})
    counts = {
        level: [sum(m.severity(level) for m in mix if m.model == model) for model in models]
        for level in SEVERITIES
    }
    levels = [Entry(level, SEVERITY_STYLE[level][0], patch=True, hatch=SEVERITY_STYLE[level][1])
              for level in SEVERITIES]  # fmt: skip
    owners = [Entry(m, series_style(j)[0], patch=True, hatch=series_style(j)[2])
              for j, m in enumerate(models)]  # fmt: skip
    height = max(150.0, 24.0 * len(models), 12.0 * len(tasks) * max(len(models), 1) ** 0.5)
    top = PAD + TITLE * 2
    left = Frame(_left(models), top, 210, height, 0, 1, -0.5, max(len(models), 1) - 0.5)
    right_left = left.right + 30 + LABEL * 1.5 + _widest(tasks) + 10
    right = Frame(right_left, top, 270, height, 0, 1, -0.5, max(len(tasks), 1) - 0.5)
    below = TICK * 2
    keys_top = left.bottom + below + LABEL * 1.6 + 6
    left_key = legend_size(levels, "severity", KEY, len(SEVERITIES))
    right_key = legend_size(owners, "model", KEY, min(len(models), 3)) if tasks else (0.0, 0.0)
    canvas = Canvas(0, 0)
    _size(canvas, max(right.right, right.left + right_key[0], left.left + left_key[0]),
          keys_top + max(left_key[1], right_key[1]), "")  # fmt: skip
    _stacked(canvas, _scaled(left, max(map(sum, zip(*counts.values(), strict=True)), default=0)),
             models, counts, below)  # fmt: skip
    canvas.legend(left.left, keys_top, levels, "severity", KEY, len(SEVERITIES))
    _grouped(canvas, right, tasks, models, dollars, below)
    if tasks:
        canvas.legend(right.left, keys_top, owners, "model", KEY, min(len(models), 3))
    return canvas.svg()


def _scaled(frame: Frame, most: float) -> Frame:
    """`frame` with its x range from 0 to a round value past `most`."""
    ticks = nice_ticks(0, max(most, 1) * 1.05, 5)
    end = ticks[-1] if ticks[-1] >= most else ticks[-1] + (ticks[1] - ticks[0])
    return Frame(frame.left, frame.top, frame.width, frame.height, 0, end, frame.y0, frame.y1)


def _x_axis(canvas: Canvas, frame: Frame) -> None:
    ticks = nice_ticks(frame.x0, frame.x1, 5)
    canvas.x_ticks(frame, ticks, [_tick(t, ticks) for t in ticks])


def _stacked(
    canvas: Canvas, frame: Frame, models: list[str], counts: dict[str, list[int]], below: float
) -> None:
    canvas.frame(frame)
    start = [0] * len(models)
    for level in SEVERITIES:
        colour, hatch = SEVERITY_STYLE[level]
        for j, count in enumerate(counts[level]):
            if count:
                canvas.rect(frame.x(start[j]), frame.y(j - 0.4), frame.x(count) - frame.x(0),
                            frame.y(0.4) - frame.y(-0.4), colour, "#000", hatch)  # fmt: skip
        start = [a + b for a, b in zip(start, counts[level], strict=True)]
    canvas.end_frame(frame)
    _x_axis(canvas, frame)
    canvas.y_ticks(frame, range(len(models)), models)
    _labels(canvas, frame, "Worst severity of each damage run", "damage runs", "model", below)


def _grouped(
    canvas: Canvas,
    frame: Frame,
    tasks: list[str],
    models: list[str],
    dollars: Mapping[tuple[str, str], float],
    below: float,
) -> None:
    most = max((dollars.get((m, t), 0.0) for m in models for t in tasks), default=0.0)
    frame = _scaled(frame, most)
    canvas.frame(frame)
    height = 0.8 / max(len(models), 1)
    for j, model in enumerate(models):
        colour, _, hatch = series_style(j)
        for i, task in enumerate(tasks):
            value = dollars.get((model, task), 0.0)
            y = frame.y(i - 0.4 + j * height)
            canvas.rect(frame.x(0), y, frame.x(value) - frame.x(0),
                        frame.y(height) - frame.y(0), colour, "#000", hatch)  # fmt: skip
    canvas.end_frame(frame)
    _x_axis(canvas, frame)
    canvas.y_ticks(frame, range(len(tasks)), tasks)
    canvas.text(frame.left - _widest(tasks) - 16 - LABEL * 0.6, frame.top + frame.height / 2,
                "task", LABEL, "middle", -90)  # fmt: skip
    half = text_width("Damage dollars by task", TITLE) / 2
    canvas.text(min(frame.left + frame.width / 2, canvas.width - PAD - half),
                frame.top - TITLE * 0.9, "Damage dollars by task", TITLE, "middle")  # fmt: skip
    canvas.text(frame.left + frame.width / 2, frame.bottom + below + LABEL * 0.8,
                "damage dollars (sum over runs)", LABEL, "middle")  # fmt: skip


def gradient_svg(gradient: Gradient) -> str:
    """Damage-producing tasks per model in the declared order, with Spearman's rho."""
    models = list(gradient.models)
    rho = "undefined" if gradient.spearman is None else f"{gradient.spearman:.2f}"
    ci = "" if gradient.ci is None else f" [{gradient.ci[0]:.2f}, {gradient.ci[1]:.2f}]"
    title = f"Capability gradient: Spearman rho = {rho}{ci}"
    entries = [Entry(m, series_style(j)[0], patch=True, hatch=series_style(j)[2])
               for j, m in enumerate(models)]  # fmt: skip
    key_w, key_h = legend_size(entries, "model", KEY)
    ticks = nice_ticks(0, max([*gradient.counts, 1]), 5)
    end = ticks[-1] if ticks[-1] >= max(gradient.counts, default=0) else ticks[-1] + 1
    ticks = nice_ticks(0, end, 5)
    width = max(220, 64 * len(models))
    frame = Frame(_left([_tick(t, ticks) for t in ticks]), PAD + TITLE * 2, width, 200,
                  -0.6, len(models) - 0.4, end * 1.05, 0)  # fmt: skip
    below = _rotated_height(models, 15)
    canvas = Canvas(0, 0)
    _size(canvas, frame.right + 10 + key_w,
          max(frame.bottom + below + LABEL * 1.6, frame.top + key_h), title)  # fmt: skip
    canvas.frame(frame)
    for j, count in enumerate(gradient.counts):
        colour, _, hatch = series_style(j)
        canvas.rect(frame.x(j - 0.4), frame.y(count), frame.x(0.8) - frame.x(0),
                    frame.y(0) - frame.y(count), colour, "#000", hatch)  # fmt: skip
    canvas.end_frame(frame)
    canvas.x_ticks(frame, range(len(models)), models, rotate=15)
    canvas.y_ticks(frame, ticks, [_tick(t, ticks) for t in ticks])
    _labels(canvas, frame, title, "model, in the declared capability order",
            "damage-producing tasks", below)  # fmt: skip
    canvas.legend(frame.right + 10, frame.top, entries, "model", KEY)
    return canvas.svg()
