"""The evaluation chart's geometry (webapp.checkpoints.charts): one bar per row with a value, bars
from the zero line, whiskers spanning the 95% interval, labels clear of both, round ticks."""

from __future__ import annotations

import pytest

from webapp.checkpoints.charts import PLOT_HEIGHT, TOP, bar_chart, colour, nice_step
from webapp.checkpoints.manifests import EvalGroup, EvalRow


def _row(model: str, value: float | None, low: float | None = None, high: float | None = None) -> EvalRow:
    return EvalRow(0, "cruxeval-o", "pass@1", model, value=value, low=low, high=high, n=200)


def test_one_bar_per_row_with_a_value_each_rising_from_zero_to_its_value() -> None:
    group = EvalGroup(
        "cruxeval-o",
        "pass@1",
        [_row("base", 0.02, 0.005, 0.05), _row("sft", 0.12, 0.08, 0.17), _row("rl", None)],
    )
    chart = bar_chart(group, 3)
    assert chart is not None and chart.id == "chart-3"
    assert [b.row.model for b in chart.bars] == ["base", "sft"]  # rl has no value: not drawn
    base, sft = chart.bars
    assert base.y + base.height == pytest.approx(chart.zero_y) == sft.y + sft.height
    assert sft.height > base.height > 0
    # the axis ends on a round tick at or above the highest whisker (0.17 -> 0.2)
    assert chart.ticks[0].label == "0.00" and chart.ticks[-1].label == "0.20"
    assert chart.zero_y == TOP + PLOT_HEIGHT and chart.ticks[-1].y == TOP
    # whiskers: (y of high, y of low), high above low; the value label sits above the whisker
    high_y, low_y = sft.whisker
    assert high_y < sft.y < low_y and sft.label_y < high_y
    assert base.fill != sft.fill
    assert "sft 0.120 (95% interval 0.080 to 0.170, n = 200)" in chart.desc
    assert chart.title == "cruxeval-o: pass@1"


def test_a_negative_difference_hangs_below_zero_with_its_label_underneath() -> None:
    chart = bar_chart(
        EvalGroup("b", "m", [_row("base", 0.5, 0.4, 0.6), _row("sft - base", -0.1, -0.2, 0.05)]), 0
    )
    assert chart is not None
    diff = chart.bars[1]
    assert diff.y == pytest.approx(chart.zero_y) and diff.height > 0
    assert diff.label_y > diff.whisker[1] and diff.fill == colour("sft - base")
    assert chart.ticks[0].label.startswith("-")


def test_a_zero_value_still_draws_a_visible_bar_and_no_values_draw_no_chart() -> None:
    chart = bar_chart(EvalGroup("b", "m", [_row("base", 0.0)]), 0)
    assert chart is not None and chart.bars[0].height == 1.0 and chart.bars[0].whisker is None
    assert bar_chart(EvalGroup("b", "m", [_row("base", None)]), 0) is None


@pytest.mark.parametrize(("span", "step"), [(0.17, 0.05), (1.0, 0.25), (0.8, 0.2), (37, 10), (0.004, 0.001)])
def test_tick_steps_are_round(span: float, step: float) -> None:
    assert nice_step(span) == pytest.approx(step)
