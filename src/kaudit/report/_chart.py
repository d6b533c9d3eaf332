"""The few pieces the report's charts are drawn with, written as SVG text.

Each chart is a plot area (`Frame`) with its ticks, marks and a legend beside it. Text
is measured before anything is drawn, with the advance widths of DejaVu Sans (the font
the SVG names first; the usual fallbacks are narrower), so every margin and every
legend is placed around the plot areas, never on them. matplotlib drew the same charts
in about 0.5 s each on a 35-task ledger, most of it laying out tick labels, after 0.5 s
of importing it; these take a few milliseconds.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape

__all__ = [
    "Canvas",
    "Entry",
    "Frame",
    "legend_size",
    "nice_ticks",
    "text_width",
    "tick_text",
]

FONT = "DejaVu Sans, Bitstream Vera Sans, Verdana, sans-serif"

# Advance widths of DejaVu Sans, in thousandths of an em, of the characters 32 to 126.
_ADVANCE = (
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636,
    636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684,
    686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695,
    635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550,
    635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612, 635, 635, 411, 521, 392,
    634, 592, 818, 592, 592, 525, 636, 337, 636, 838,
)  # fmt: skip

# Hatches as SVG pattern tiles (8 x 8 px), drawn in black over a bar's own colour.
_HATCHES = {
    "//": '<path d="M-2,2 l4,-4 M0,8 l8,-8 M6,10 l4,-4" stroke="#000" stroke-width="0.8"/>',
    "\\\\": '<path d="M-2,6 l4,4 M0,0 l8,8 M6,-2 l4,4" stroke="#000" stroke-width="0.8"/>',
    "xx": '<path d="M0,8 l8,-8 M0,0 l8,8" stroke="#000" stroke-width="0.8"/>',
    "..": '<circle cx="4" cy="4" r="1" fill="#000"/>',
    "oo": '<circle cx="4" cy="4" r="2.2" fill="none" stroke="#000" stroke-width="0.8"/>',
}
_DASHES = {"-": "", "--": "6,3", ":": "1.5,2.5", "-.": "6,2.5,1.5,2.5"}


def text_width(text: str, size: float) -> float:
    """Width in px of `text` at font size `size` px (a full em for a character not listed)."""
    total = 0
    for char in text:
        code = ord(char)
        if 32 <= code < 127:
            total += _ADVANCE[code - 32]
        elif not unicodedata.combining(char):
            total += 1000
    return total * size / 1000


def nice_ticks(low: float, high: float, most: int = 6) -> list[float]:
    """At most about `most` round values (steps of 1, 2, 2.5 or 5 × 10^n) in [low, high]."""
    span = high - low
    if span <= 0 or not math.isfinite(span):
        return [low]
    raw = span / most
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * (1 - 1e-9))
    first = math.ceil(low / step - 1e-9)
    last = math.floor(high / step + 1e-9)
    return [round(i * step, 12) for i in range(first, last + 1)]


def tick_text(value: float, ticks: Sequence[float]) -> str:
    """A tick label with as many decimals as the step between `ticks` needs."""
    step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
    decimals = 0
    while decimals < 6 and abs(step * 10**decimals - round(step * 10**decimals)) > 1e-6:
        decimals += 1
    return f"{value:,.{decimals}f}"


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _style(fill: str = "none", stroke: str = "none", width: float = 1.0, dash: str = "") -> str:
    line = f' stroke="{stroke}" stroke-width="{_num(width)}"' if stroke != "none" else ""
    return f'fill="{fill}"{line}' + (f' stroke-dasharray="{dash}"' if dash else "")


def _polygon(points: Sequence[tuple[float, float]], style: str) -> str:
    return f'<polygon points="{" ".join(f"{_num(x)},{_num(y)}" for x, y in points)}" {style}/>'


def _regular(x: float, y: float, r: float, corners: int, turn: float, style: str) -> str:
    return _polygon(
        [(x + r * math.sin(turn + 2 * math.pi * i / corners),
          y - r * math.cos(turn + 2 * math.pi * i / corners)) for i in range(corners)],
        style,
    )  # fmt: skip


def _star(x: float, y: float, r: float, style: str) -> str:
    points = []
    for i in range(10):
        radius = r if i % 2 == 0 else r * 0.45
        points.append(
            (x + radius * math.sin(math.pi * i / 5), y - radius * math.cos(math.pi * i / 5))
        )
    return _polygon(points, style)


def _cross(x: float, y: float, r: float, turn: float, style: str) -> str:
    arm = r * 0.35
    outline = [(-arm, -r), (arm, -r), (arm, -arm), (r, -arm), (r, arm), (arm, arm), (arm, r),
               (-arm, r), (-arm, arm), (-r, arm), (-r, -arm), (-arm, -arm)]  # fmt: skip
    cos, sin = math.cos(turn), math.sin(turn)
    return _polygon([(x + a * cos - b * sin, y + a * sin + b * cos) for a, b in outline], style)


def marker(kind: str, x: float, y: float, size: float, fill: str, stroke: str) -> str:
    """One marker of matplotlib's codes (o s ^ v < > D P X * h p), `size` px across."""
    r = size / 2
    style = _style(fill, stroke, 1.0)
    shapes: dict[str, Callable[[], str]] = {
        "o": lambda: f'<circle cx="{_num(x)}" cy="{_num(y)}" r="{_num(r)}" {style}/>',
        "s": lambda: _regular(x, y, r * 1.3, 4, math.pi / 4, style),
        "D": lambda: _regular(x, y, r * 1.2, 4, 0.0, style),
        "^": lambda: _regular(x, y, r * 1.25, 3, 0.0, style),
        "v": lambda: _regular(x, y, r * 1.25, 3, math.pi, style),
        ">": lambda: _regular(x, y, r * 1.25, 3, math.pi / 2, style),
        "<": lambda: _regular(x, y, r * 1.25, 3, -math.pi / 2, style),
        "h": lambda: _regular(x, y, r * 1.15, 6, 0.0, style),
        "p": lambda: _regular(x, y, r * 1.15, 5, 0.0, style),
        "*": lambda: _star(x, y, r * 1.4, style),
        "P": lambda: _cross(x, y, r * 1.2, 0.0, style),
        "X": lambda: _cross(x, y, r * 1.2, math.pi / 4, style),
    }
    return shapes.get(kind, shapes["o"])()


@dataclass(frozen=True)
class Entry:
    """One legend line: a swatch (a marker, a line, or a patch with its hatch) and a label."""

    label: str
    colour: str = "#000"
    marker: str = ""
    filled: bool = True
    line: str = ""
    patch: bool = False
    hatch: str = ""


def legend_size(
    entries: Sequence[Entry], title: str, size: float, columns: int = 1
) -> tuple[float, float]:
    """(width, height) in px of the legend `Canvas.legend` draws."""
    rows = math.ceil(len(entries) / columns)
    widths = [text_width(e.label, size) for e in entries]
    column = max(widths, default=0.0) + size * 3.6
    width = max(column * columns, text_width(title, size) if title else 0.0) + size
    return width, rows * size * 1.6 + (size * 1.6 if title else 0.0) + size * 0.6


@dataclass(frozen=True)
class Frame:
    """A plot area in px and the data ranges it shows: `x0` at its left, `y0` at its top."""

    left: float
    top: float
    width: float
    height: float
    x0: float
    x1: float
    y0: float
    y1: float

    def x(self, value: float) -> float:
        """The px column of data value `value`."""
        return self.left + (value - self.x0) / (self.x1 - self.x0) * self.width

    def y(self, value: float) -> float:
        """The px row of data value `value`."""
        return self.top + (value - self.y0) / (self.y1 - self.y0) * self.height

    @property
    def right(self) -> float:
        """Its right edge in px."""
        return self.left + self.width

    @property
    def bottom(self) -> float:
        """Its bottom edge in px."""
        return self.top + self.height


@dataclass
class Canvas:
    """An SVG document under construction; `svg()` writes it."""

    width: float
    height: float
    parts: list[str] = field(default_factory=list)
    hatches: set[str] = field(default_factory=set)
    defs: list[str] = field(default_factory=list)
    reach: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    """The box text reaches (left, top, right, bottom): `svg()` widens the view to hold it."""

    def text(
        self, x: float, y: float, text: str, size: float = 10, anchor: str = "start",
        rotate: float = 0.0, fill: str = "#000", middle: bool = True,
    ) -> None:  # fmt: skip
        """Text at (x, y): vertically centred on y, or with its baseline on y."""
        shift = size * 0.36 if middle else 0.0
        self._reach(x, y, y + shift, text_width(text, size), size, anchor, rotate)
        turn = f' transform="rotate({_num(rotate)} {_num(x)} {_num(y)})"' if rotate else ""
        self.parts.append(
            f'<text x="{_num(x)}" y="{_num(y + shift)}" font-size="{_num(size)}" '
            f'text-anchor="{anchor}" fill="{fill}"{turn}>{escape(text, quote=False)}</text>'
        )

    def _reach(
        self, x: float, y: float, baseline: float, width: float, size: float, anchor: str,
        rotate: float,
    ) -> None:  # fmt: skip
        """Widen `reach` to the corners of a text's box, turned about (x, y) as it is drawn."""
        start = x - width * {"start": 0.0, "middle": 0.5}.get(anchor, 1.0)
        turn = math.radians(rotate)
        cos, sin = math.cos(turn), math.sin(turn)
        left, top, right, bottom = self.reach
        for cx in (start, start + width):
            for cy in (baseline - size * 0.8, baseline + size * 0.25):
                dx, dy = cx - x, cy - y
                px, py = x + dx * cos - dy * sin, y + dx * sin + dy * cos
                left, right = min(left, px), max(right, px)
                top, bottom = min(top, py), max(bottom, py)
        self.reach = (left, top, right, bottom)

    def rect(
        self, x: float, y: float, width: float, height: float, fill: str,
        stroke: str = "none", hatch: str = "", css: str = "",
    ) -> None:  # fmt: skip
        """A rectangle, optionally hatched; `css` names its class."""
        cls = f' class="{css}"' if css else ""
        box = f'x="{_num(x)}" y="{_num(y)}" width="{_num(width)}" height="{_num(height)}"'
        self.parts.append(f"<rect{cls} {box} {_style(fill, stroke, 0.8)}/>")
        if hatch in _HATCHES:
            self.hatches.add(hatch)
            self.parts.append(f'<rect {box} fill="url(#hatch{list(_HATCHES).index(hatch)})"/>')

    def line(
        self, points: Sequence[tuple[float, float]], stroke: str = "#000", width: float = 1.0,
        dash: str = "-",
    ) -> None:  # fmt: skip
        """A polyline through `points` in a matplotlib line style (- -- : -.)."""
        path = " ".join(f"{_num(x)},{_num(y)}" for x, y in points)
        self.parts.append(
            f'<polyline points="{path}" {_style("none", stroke, width, _DASHES[dash])}/>'
        )

    def marker(self, kind: str, x: float, y: float, size: float, fill: str, stroke: str) -> None:
        """A marker (`marker`) centred on (x, y)."""
        self.parts.append(marker(kind, x, y, size, fill, stroke))

    def group(self, css: str) -> None:
        """Open a group of class `css` (`end` closes it): the browser test finds plots by it."""
        self.parts.append(f'<g class="{css}">')

    def end(self) -> None:
        """Close the last group."""
        self.parts.append("</g>")

    def frame(self, frame: Frame) -> None:
        """Open an axes group whose first element is its plot area (`end_frame` closes it)."""
        self.group("axes")
        self.rect(frame.left, frame.top, frame.width, frame.height, "#fff", css="plot")

    def end_frame(self, frame: Frame) -> None:
        """Draw the plot area's border over what was drawn in it, and close its group."""
        self.rect(frame.left, frame.top, frame.width, frame.height, "none", "#000")
        self.end()

    def x_ticks(
        self, frame: Frame, values: Sequence[float], labels: Sequence[str], size: float = 10,
        rotate: float = 0.0,
    ) -> None:  # fmt: skip
        """Tick marks under the plot area and their labels (turned by `rotate` degrees)."""
        for value, label in zip(values, labels, strict=True):
            x = frame.x(value)
            self.line([(x, frame.bottom), (x, frame.bottom + 3.5)], width=0.8)
            if rotate:
                self.text(x, frame.bottom + 6 + size * 0.7, label, size, "end", -rotate)
            else:
                self.text(x, frame.bottom + 6 + size * 0.7, label, size, "middle")

    def y_ticks(
        self, frame: Frame, values: Sequence[float], labels: Sequence[str], size: float = 10,
        right: bool = False,
    ) -> None:  # fmt: skip
        """Tick marks left of the plot area (right of it with `right`) and their labels."""
        edge, way = (frame.right, 1) if right else (frame.left, -1)
        for value, label in zip(values, labels, strict=True):
            y = frame.y(value)
            self.line([(edge, y), (edge + way * 3.5, y)], width=0.8)
            self.text(edge + way * 6, y, label, size, "start" if right else "end")

    def legend(
        self, x: float, y: float, entries: Sequence[Entry], title: str = "", size: float = 7,
        columns: int = 1,
    ) -> None:  # fmt: skip
        """A framed legend with its top left corner at (x, y)."""
        width, height = legend_size(entries, title, size, columns)
        self.group("legend")
        self.rect(x, y, width, height, "#fff", "#ccc")
        row = y + size * 1.1
        if title:
            self.text(x + width / 2, row, title, size, "middle")
            row += size * 1.6
        column = (width - size) / columns
        for i, entry in enumerate(entries):
            left = x + size / 2 + (i % columns) * column
            middle = row + (i // columns) * size * 1.6
            self._swatch(entry, left, middle, size)
            self.text(left + size * 3.2, middle, entry.label, size)
        self.end()

    def _swatch(self, entry: Entry, left: float, middle: float, size: float) -> None:
        if entry.patch:
            self.rect(left, middle - size * 0.45, size * 2.6, size * 0.9, entry.colour, "#000",
                      entry.hatch)  # fmt: skip
        if entry.line:
            self.line([(left, middle), (left + size * 2.6, middle)], entry.colour, 1.2, entry.line)
        if entry.marker:
            fill = entry.colour if entry.filled else "#fff"
            self.marker(entry.marker, left + size * 1.3, middle, size * 0.8, fill, entry.colour)

    def svg(self) -> str:
        """The SVG document: its own size in px, white behind everything."""
        patterns = "".join(
            f'<pattern id="hatch{i}" width="8" height="8" patternUnits="userSpaceOnUse">'
            f"{tile}</pattern>"
            for i, (code, tile) in enumerate(_HATCHES.items())
            if code in self.hatches
        )
        left, top = math.floor(min(0.0, self.reach[0] - 2)), math.floor(min(0.0, self.reach[1] - 2))
        width = math.ceil(max(self.width, self.reach[2] + 2)) - left
        height = math.ceil(max(self.height, self.reach[3] + 2)) - top
        return (
            '<?xml version="1.0" encoding="utf-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="{left} {top} {width} {height}" font-family="{FONT}">'
            f"<defs>{patterns}{''.join(self.defs)}</defs>"
            f'<rect x="{left}" y="{top}" width="{width}" height="{height}" fill="#fff"/>'
            f"{''.join(self.parts)}</svg>\n"
        )
