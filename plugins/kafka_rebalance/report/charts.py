"""The report's charts as standalone inline SVG strings (matplotlib, no pyplot state).

Every figure is built on its own ``Figure`` (thread-safe inside Airflow workers) and
saved with a fixed hash salt and no date, so the same numbers give byte-identical SVG.
Text stays text (``svg.fonttype = none``): small, sharp, and searchable. Only numbers,
broker ids and batch ids are drawn; topic names never reach a chart.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib

matplotlib.use("Agg", force=False)  # never a GUI backend on a worker

from matplotlib.figure import Figure

_RC: Any = {  # matplotlib types rc keys as a Literal union
    "svg.hashsalt": "kafka-rebalance-report",
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
# Colour-blind-safe (Okabe-Ito) series colours.
COLOURS = {"before": "#E69F00", "projected": "#0072B2", "final": "#009E73", "bound": "#999999", "analysis": "#0072B2"}
_XML_PROLOGUE = re.compile(r"^.*?(?=<svg)", re.S)


@dataclass(frozen=True, slots=True)
class Series:
    label: str  # before | projected | final
    values: Sequence[float | None]


def _to_svg(fig: Figure, chart_id: str) -> str:
    buf = io.StringIO()
    with matplotlib.rc_context(_RC):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    svg = _XML_PROLOGUE.sub("", buf.getvalue(), count=1)
    # Several SVGs share one page: give each one its own id namespace.
    svg = svg.replace('id="', f'id="{chart_id}-').replace("url(#", f"url(#{chart_id}-").replace('href="#', f'href="#{chart_id}-')
    return svg.replace("<svg ", f'<svg role="img" aria-labelledby="{chart_id}-title" data-chart="{chart_id}" ', 1)


def _new_figure(width: float = 9.0, height: float = 3.2) -> Figure:
    with matplotlib.rc_context(_RC):
        return Figure(figsize=(width, height), dpi=72)


def broker_bars(
    chart_id: str,
    title: str,
    broker_ids: Sequence[int | str],
    series: Sequence[Series],
    band: tuple[float, float] | None = None,
    band_label: str = "",
    unit_divisor: float = 1.0,
    unit: str = "",
    marks: Sequence[float | None] | None = None,
    mark_label: str = "",
    limits: Sequence[float | None] | None = None,
    limit_label: str = "",
    tick_labels: Sequence[str] | None = None,
    xlabel: str = "broker",
) -> str:
    """Grouped bars per broker, one colour per series, an optional target band behind them; ``marks`` (a
    per-broker target, black) and ``limits`` (a per-broker capacity, red dashes) span each broker's group.
    ``broker_ids`` name the groups in the SVG's ids; ``tick_labels`` (else the ids) label them on the axis."""
    with matplotlib.rc_context(_RC):
        fig = _new_figure(max(6.0, min(18.0, 1.2 + 0.45 * len(broker_ids) * max(1, len(series)))))
        ax = fig.add_subplot()
        ax.set_title(title, loc="left")
        n = max(1, len(series))
        width = 0.8 / n
        xs = range(len(broker_ids))
        if band is not None:
            lo, hi = band[0] / unit_divisor, band[1] / unit_divisor
            patch = ax.axhspan(lo, hi if hi > lo else lo + 1e-9, color="#000000", alpha=0.08, label=band_label, zorder=0)
            patch.set_gid("target-band")
        for i, s in enumerate(series):
            vals = [0.0 if v is None else v / unit_divisor for v in s.values]
            bars = ax.bar([x - 0.4 + width * (i + 0.5) for x in xs], vals, width, label=s.label,
                          color=COLOURS.get(s.label, "#555555"), zorder=2)
            for bar, bid in zip(bars, broker_ids):
                bar.set_gid(f"bar-{s.label}-{bid}")
        for values, label, style, gid in ((marks, mark_label, {"color": "#000000", "linestyle": "-"}, "mark"),
                                          (limits, limit_label, {"color": "#D55E00", "linestyle": "--"}, "limit")):
            if values is None:
                continue
            first = True
            for x, v, bid in zip(xs, values, broker_ids):
                if v is None:
                    continue
                line = ax.hlines(v / unit_divisor, x - 0.45, x + 0.45, linewidth=1.5, zorder=3,
                                 label=label if first else None, **style)  # type: ignore[arg-type]
                line.set_gid(f"{gid}-{bid}")
                first = False
        ax.set_xticks(list(xs), list(tick_labels) if tick_labels is not None else [str(b) for b in broker_ids])
        ax.set_xlabel(xlabel)
        if unit:
            ax.set_ylabel(unit)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        return _to_svg(fig, chart_id)


def imbalance_ratios(
    chart_id: str, broker_ids: Sequence[int], series: Sequence[Series], threshold_percentage: float,
    value_labels: bool = False,
) -> str:
    """Kafka's leader imbalance ratio per broker (in %), with the threshold as a red line. ``value_labels``: each
    bar's value written above it ("n/a" for a broker without preferred partitions), so 0 % reads as a figure."""
    with matplotlib.rc_context(_RC):
        fig = _new_figure(max(6.0, min(18.0, 1.2 + 0.45 * len(broker_ids) * max(1, len(series)))))
        ax = fig.add_subplot()
        ax.set_title("Leader imbalance ratio per broker (Kafka's definition)", loc="left")
        n = max(1, len(series))
        width = 0.8 / n
        xs = range(len(broker_ids))
        for i, s in enumerate(series):
            vals = [0.0 if v is None else 100.0 * v for v in s.values]
            bars = ax.bar([x - 0.4 + width * (i + 0.5) for x in xs], vals, width, label=s.label,
                          color=COLOURS.get(s.label, "#555555"), zorder=2)
            for bar, bid in zip(bars, broker_ids):
                bar.set_gid(f"bar-{s.label}-{bid}")
            if value_labels:
                ax.bar_label(bars, ["n/a" if v is None else f"{100.0 * v:.1f}%" for v in s.values], padding=2,
                             fontsize=8)
        line = ax.axhline(threshold_percentage, color="#D55E00", linewidth=1.5, linestyle="--", zorder=3,
                          label=f"threshold {threshold_percentage:g}%")
        line.set_gid("threshold-line")
        top = max([threshold_percentage] + [100.0 * v for s in series for v in s.values if v is not None])
        ax.set_ylim(0, max(1.0, top * 1.15))
        ax.set_xticks(list(xs), [str(b) for b in broker_ids])
        ax.set_xlabel("broker")
        ax.set_ylabel("% of preferred partitions not led")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        return _to_svg(fig, chart_id)


def imbalance_over_time(chart_id: str, labels: Sequence[str], percents: Sequence[float],
                        threshold_percentage: float | None) -> str:
    """One point per analysis, oldest first: the largest broker leader imbalance (in %), with the threshold as a
    red line. ``labels`` name the analyses on the x axis (their times)."""
    with matplotlib.rc_context(_RC):
        fig = _new_figure(max(6.0, min(18.0, 2.0 + 0.5 * len(labels))), 3.0)
        ax = fig.add_subplot()
        ax.set_title("Largest broker leader imbalance, analysis by analysis", loc="left")
        xs = list(range(len(labels)))
        (line,) = ax.plot(xs, list(percents), marker="o", color=COLOURS["analysis"], zorder=3, label="largest ratio")
        line.set_gid("imbalance-history")
        top = max(list(percents) + [threshold_percentage or 0.0])
        if threshold_percentage is not None:
            limit = ax.axhline(threshold_percentage, color="#D55E00", linewidth=1.5, linestyle="--", zorder=2,
                               label=f"threshold {threshold_percentage:g}%")
            limit.set_gid("threshold-line")
        ax.set_ylim(0, max(1.0, top * 1.15))
        ax.set_xlim(-0.5, len(xs) - 0.5)
        ax.set_xticks(xs, list(labels), rotation=30, ha="right")
        ax.set_xlabel("analysis (UTC)")
        ax.set_ylabel("% of preferred partitions not led")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        return _to_svg(fig, chart_id)


def batch_timeline(
    chart_id: str,
    batch_ids: Sequence[str],
    estimated: Sequence[tuple[float, float]],
    actual: Sequence[tuple[float, float] | None] | None,
) -> str:
    """Gantt bars: (start, duration) in seconds from the start of the first batch."""
    with matplotlib.rc_context(_RC):
        fig = _new_figure(9.0, max(1.8, 0.9 + 0.32 * len(batch_ids) * (2 if actual else 1)))
        ax = fig.add_subplot()
        ax.set_title("Batch timeline" + (" (estimated and actual)" if actual else " (estimated)"), loc="left")
        ys = list(range(len(batch_ids)))
        h = 0.38 if actual else 0.7
        est = ax.barh([y - (h / 2 if actual else 0) for y in ys], [d for _, d in estimated],
                      left=[s for s, _ in estimated], height=h, color=COLOURS["projected"], label="estimated")
        for bar, bid in zip(est, batch_ids):
            bar.set_gid(f"estimated-{bid}")
        if actual:
            done = [(y, a) for y, a in zip(ys, actual) if a is not None]
            act = ax.barh([y + h / 2 for y, _ in done], [a[1] for _, a in done], left=[a[0] for _, a in done],
                          height=h, color=COLOURS["final"], label="actual")
            for bar, (y, _) in zip(act, done):
                bar.set_gid(f"actual-{batch_ids[y]}")
        ax.set_yticks(ys, [f"batch {b}" for b in batch_ids])
        ax.invert_yaxis()
        ax.set_xlabel("seconds from the start of the first batch")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        return _to_svg(fig, chart_id)


def against_lower_bounds(chart_id: str, moves: tuple[int, int], bytes_moved: tuple[int, int], byte_unit: tuple[float, str]) -> str:
    """Planned replica moves and bytes next to the lower bounds no plan can beat."""
    divisor, unit = byte_unit
    with matplotlib.rc_context(_RC):
        fig = _new_figure(9.0, 2.6)
        for i, (title, (planned, bound), div, ylabel) in enumerate(
            (("Replica moves", moves, 1.0, "moves"), ("Bytes moved", bytes_moved, divisor, unit))
        ):
            ax = fig.add_subplot(1, 2, i + 1)
            ax.set_title(title, loc="left")
            bars = ax.barh([1, 0], [bound / div, planned / div], color=[COLOURS["bound"], COLOURS["projected"]])
            what = "moves" if i == 0 else "bytes"
            bars[0].set_gid(f"{what}-lower-bound")
            bars[1].set_gid(f"{what}-plan")
            ax.set_yticks([1, 0], ["lower bound", "plan"])
            ax.set_xlabel(ylabel)
        fig.subplots_adjust(wspace=0.45)
        return _to_svg(fig, chart_id)


def throttle_over_time(chart_id: str, brokers: Mapping[int, Sequence[tuple[float, int, int]]], floor: int,
                       ceiling: int, end: float | None, byte_unit: tuple[float, str]) -> str:
    """``execute --throttle auto``: each broker's follower (solid) and leader (dashed) rate as set, a step per
    change, from the first change to ``end`` (seconds; None: the last change), between the floor and ceiling."""
    with matplotlib.rc_context(_RC):
        fig = _new_figure(9.0, 3.4)
        ax = fig.add_subplot()
        ax.set_title("Replication throttle per broker over time (auto)", loc="left")
        div, unit = byte_unit[0], f"{byte_unit[1]}/s"
        last = max([end or 0.0] + [t for rows in brokers.values() for t, _, _ in rows])
        for i, (broker, rows) in enumerate(sorted(brokers.items())):
            colour = f"C{i % 10}"
            xs = [t for t, _, _ in rows] + [last]
            for k, style, what in ((1, "-", "follower"), (2, "--", "leader")):
                ys = [r[k] / div for r in rows]
                (line,) = ax.step(xs, ys + ys[-1:], where="post", color=colour, linestyle=style,
                                  label=f"broker {broker} {what}")
                line.set_gid(f"throttle-{broker}-{what}")
        for value, name in ((ceiling, "ceiling"), (floor, "floor")):
            bound = ax.axhline(value / div, color=COLOURS["bound"], linewidth=1, linestyle=":", label=name)
            bound.set_gid(f"throttle-{name}")
        ax.set_ylim(0, ceiling / div * 1.1)
        ax.set_xlabel("seconds from the first rate set")
        ax.set_ylabel(unit)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        return _to_svg(fig, chart_id)

