"""Colours, markers and hatches of the report's figures, chosen to survive grayscale print.

Series colours are spaced at least 10 units of CIE L* lightness apart, and every series
also has its own marker and hatch, so a black-and-white copy still tells them apart.
"""

from __future__ import annotations

__all__ = [
    "HEATMAP_CMAP",
    "HEATMAP_STOPS",
    "SERIES",
    "SEVERITY_STYLE",
    "Style",
    "heat",
    "lightness",
    "relative_luminance",
    "series_style",
]

Style = tuple[str, str, str]
"""(colour, marker, hatch)."""

SERIES: tuple[Style, ...] = (
    ("#000000", "o", ""),
    ("#1f4e9c", "s", "//"),
    ("#c0392b", "^", "\\\\"),
    ("#2e9e6a", "D", "xx"),
    ("#56b4e9", "v", ".."),
    ("#f0e442", "P", "oo"),
)

SEVERITY_STYLE: dict[str, tuple[str, str]] = {
    "LOW": ("#fdd49e", ""),
    "MEDIUM": ("#fc8d59", "//"),
    "HIGH": ("#d7301f", "xx"),
    "CRITICAL": ("#67001f", ".."),
}
"""Severity → (colour, hatch); lightness falls as severity rises."""

HEATMAP_CMAP = "YlOrRd"
"""Sequential and monotone in lightness: pale yellow is no damage, deep red the most (more
damage = hotter and darker, as readers of a heat map expect; a grayscale copy keeps the
order)."""

HEATMAP_STOPS = (
    "#ffffcc", "#ffeda0", "#fed976", "#feb24c", "#fd8d3c", "#fc4e2a", "#e31a1c", "#bd0026",
    "#800026",
)  # fmt: skip
"""ColorBrewer's nine-class YlOrRd, the colours matplotlib's map of that name runs through."""


def heat(rate: float) -> str:
    """The heat map's colour of a damage rate in [0, 1]: linear between `HEATMAP_STOPS`."""
    position = min(max(rate, 0.0), 1.0) * (len(HEATMAP_STOPS) - 1)
    low = min(int(position), len(HEATMAP_STOPS) - 2)
    share = position - low
    a, b = (HEATMAP_STOPS[low].lstrip("#"), HEATMAP_STOPS[low + 1].lstrip("#"))
    channels = (
        round(int(a[i : i + 2], 16) * (1 - share) + int(b[i : i + 2], 16) * share)
        for i in (0, 2, 4)
    )
    return "#" + "".join(f"{c:02x}" for c in channels)


_EXTRA_MARKERS = ("X", "*", "h", "<", ">", "p")


def series_style(index: int) -> Style:
    """Style of the index-th series; past the palette, colours repeat with new markers."""
    colour, marker, hatch = SERIES[index % len(SERIES)]
    if index >= len(SERIES):
        marker = _EXTRA_MARKERS[(index - len(SERIES)) % len(_EXTRA_MARKERS)]
    return colour, marker, hatch


def relative_luminance(colour: str) -> float:
    """WCAG relative luminance Y of a '#rrggbb' colour (sRGB, linearised)."""
    digits = colour.lstrip("#")
    channels = [int(digits[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def lightness(colour: str) -> float:
    """CIE L* (0 black … 100 white) of a '#rrggbb' colour: what survives a grayscale copy."""
    y = relative_luminance(colour)
    return 116 * y ** (1 / 3) - 16 if y > (6 / 29) ** 3 else y * (29 / 3) ** 3
