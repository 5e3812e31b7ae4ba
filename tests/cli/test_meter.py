"""The progress meter: a few plain lines in a log, a bar on a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from kafka_rebalance.cli import meter as meter_module
from kafka_rebalance.cli.meter import meter


def test_off_a_terminal_it_prints_one_line_per_tenth_never_one_per_call(capsys) -> None:
    with meter("producing", 1000 * 1024) as advance:
        for _ in range(1000):
            advance(1024)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 10
    assert lines[0] == "producing: 10% (100.0 KiB of 1,000.0 KiB)"
    assert lines[-1].startswith("producing: 100% (") and lines[-1].endswith(")")
    assert [int(line.split(": ")[1].split("%")[0]) for line in lines] == list(range(10, 101, 10))


def test_one_large_step_prints_every_tenth_it_crossed_and_nothing_past_the_total(capsys) -> None:
    with meter("measuring", 60, unit="seconds") as advance:
        advance(35)
        advance(100)
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(": ")[1].split("%")[0] for line in lines] == ["10", "20", "30", "40", "50", "60", "70", "80", "90", "100"]


def test_nothing_to_do_prints_nothing(capsys) -> None:
    with meter("producing", 0) as advance:
        advance(5)
    assert capsys.readouterr().err == ""


def test_on_a_terminal_it_draws_a_bar_to_the_end(monkeypatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(meter_module, "stderr", Console(file=out, force_terminal=True, width=100))
    with meter("producing", 4096) as advance:
        advance(4096)
    drawn = out.getvalue()
    assert "producing" in drawn and "100%" in drawn and "━" in drawn
