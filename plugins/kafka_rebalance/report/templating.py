"""The Jinja environment of every page this tool renders (report.html, the execution page): one set of filters
and globals, so a figure is formatted the same way wherever it appears. No matplotlib here: the plugin's web
app renders pages with it in Airflow's API server."""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from kafka_rebalance.report.progress_view import figures, headline
from kafka_rebalance.units import human_bytes, human_rate, human_seconds

TEMPLATES = Path(__file__).parent / "templates"


def environment() -> Environment:
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(["html", "j2"]),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["bytes"] = human_bytes
    env.filters["rate"] = human_rate
    env.filters["duration"] = human_seconds
    env.filters["tenths"] = lambda s: "–" if s is None else f"{s:,.1f} s"  # a step's part of an estimate: they add up
    env.filters["ratio"] = lambda v: "–" if v is None else f"{100 * v:.1f}%"
    env.globals["progress_figures"] = figures
    env.globals["progress_headline"] = headline
    return env
