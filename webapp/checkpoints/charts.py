"""The geometry of the evaluation chart: one grouped bar chart per benchmark and metric, a bar per
model variant (base, SFT, RL, and paired differences such as ``sft - base``), each with its 95%
interval as a whisker and its value printed above it.

Only numbers and strings are computed here; templates/checkpoints/_chart.html draws them as inline
SVG (no JavaScript, no chart library), so Django's autoescaping covers every label taken from a
manifest. The y axis always includes zero, so a negative difference hangs below the zero line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from webapp.checkpoints.manifests import EvalGroup, EvalRow, fmt

SLOT = 96  # horizontal room per bar
BAR = 56
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 30, 56
PLOT_HEIGHT = 170
MIN_WIDTH = 260
COLOURS = {"base": "#8c959f", "sft": "#0969da", "rl": "#1a7f37"}
DIFFERENCE, OTHER = "#bc4c00", "#8250df"


@dataclass(frozen=True)
class Tick:
    y: float
    label: str


@dataclass(frozen=True)
class Bar:
    row: EvalRow
    x: float
    y: float
    width: float
    height: float
    fill: str
    cx: float  # centre: whisker, labels
    whisker: tuple[float, float] | None  # (y of high, y of low)
    cap_left: float
    cap_right: float
    label_y: float  # the value printed above (or below, for a negative value) the bar and whisker
    title: str  # the bar's tooltip and its part of the description


@dataclass(frozen=True)
class Chart:
    id: str
    title: str
    desc: str
    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    zero_y: float
    ticks: list[Tick]
    bars: list[Bar]
    axis_label_y: int  # variant names
    n_label_y: int  # "n = 200"


def colour(model: str) -> str:
    if " - " in model:
        return DIFFERENCE
    if model.startswith("rl"):
        return COLOURS["rl"]
    return COLOURS.get(model, OTHER)


def nice_step(span: float, ticks: int = 4) -> float:
    """A round tick step (1, 2, 2.5 or 5 times a power of ten) giving about ``ticks`` intervals."""
    raw = span / ticks
    magnitude = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * magnitude >= raw * (1 - 1e-9):
            return m * magnitude
    return 10 * magnitude  # not reached


def _tick_label(value: float, step: float) -> str:
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    if round(step * 10**decimals, 6) % 1:  # 2.5, 0.25, ...
        decimals += 1
    return f"{value:.{decimals}f}"


def describe(row: EvalRow) -> str:
    """``sft 0.120 (95% interval 0.080 to 0.170, n = 200)``: the bar's title and its line in desc."""
    parts = []
    if row.has_interval:
        parts.append(f"95% interval {fmt(row.low)} to {fmt(row.high)}")
    if row.n is not None:
        parts.append(f"n = {row.n}")
    return f"{row.model} {fmt(row.value)}" + (f" ({', '.join(parts)})" if parts else "")


def bar_chart(group: EvalGroup, index: int) -> Chart | None:
    """The chart of ``group``'s rows that have a value (None when none has)."""
    rows = group.plotted
    if not rows:
        return None
    points = [0.0]
    for row in rows:
        points += [row.value or 0.0, *(row.interval or ())]
    lo, hi = min(points), max(points)
    if hi == lo:
        hi = lo + 1.0
    step = nice_step(hi - lo)
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    axis_lo, axis_hi = first * step, last * step

    def y(value: float) -> float:
        return round(TOP + (axis_hi - value) / (axis_hi - axis_lo) * PLOT_HEIGHT, 1)

    width = max(MIN_WIDTH, LEFT + SLOT * len(rows) + RIGHT)
    plot_bottom = TOP + PLOT_HEIGHT
    zero = y(0.0)
    bars = []
    for i, row in enumerate(rows):
        value = row.value or 0.0
        cx = LEFT + SLOT * i + SLOT / 2
        top, bottom = (y(value), zero) if value >= 0 else (zero, y(value))
        interval = row.interval
        whisker = (y(interval[1]), y(interval[0])) if interval else None
        if value >= 0:
            label_y = min(top, whisker[0] if whisker else top) - 6
        else:
            label_y = max(bottom, whisker[1] if whisker else bottom) + 14
        bars.append(
            Bar(
                row=row,
                x=cx - BAR / 2,
                y=top,
                width=BAR,
                height=max(round(bottom - top, 1), 1.0),  # a zero still shows as a line
                fill=colour(row.model),
                cx=cx,
                whisker=whisker,
                cap_left=cx - 8,
                cap_right=cx + 8,
                label_y=label_y,
                title=describe(row),
            )
        )
    chart_id = f"chart-{index}"
    return Chart(
        id=chart_id,
        title=f"{group.benchmark}: {group.metric}",
        desc=(
            f"Bar chart of {group.metric} on {group.benchmark}, one bar per model with its 95% interval: "
            + "; ".join(b.title for b in bars)
            + "."
        ),
        width=width,
        height=plot_bottom + BOTTOM,
        left=LEFT,
        right=width - RIGHT,
        top=TOP,
        bottom=plot_bottom,
        zero_y=zero,
        ticks=[Tick(y(k * step), _tick_label(k * step, step)) for k in range(first, last + 1)],
        bars=bars,
        axis_label_y=plot_bottom + 28,
        n_label_y=plot_bottom + 44,
    )


def charts(groups: list[EvalGroup]) -> list[tuple[EvalGroup, Chart | None]]:
    """Each group with its chart, numbered in page order (SVG ids must be unique on the page)."""
    return [(group, bar_chart(group, i)) for i, group in enumerate(groups)]
