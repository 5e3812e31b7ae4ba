"""One owner of sizes and rates: IEC units out, the same units (or plain bytes) in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_rebalance.units import human_bytes, human_rate, human_seconds, parse_bytes
from tests.support.cli_inprocess import run_cli

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "sample-cluster.json"


@pytest.mark.parametrize(("n", "text"), [
    (0, "0 B"), (1023, "1,023 B"), (1024, "1.0 KiB"), (52428800, "50.0 MiB"), (7845131198, "7.3 GiB"),
    (3 * 1024**4, "3.0 TiB"), (2 * 1024**6, "2.0 EiB"),
])
def test_human_bytes_uses_binary_units(n, text):
    assert human_bytes(n) == text


def test_a_rate_is_bytes_per_second_in_the_same_units():
    assert human_rate(52428800) == "50.0 MiB/s" and human_rate(512) == "512 B/s"


@pytest.mark.parametrize(("text", "value"), [
    ("52428800", 52428800), ("50MiB", 50 * 1024**2), ("50 MiB/s", 50 * 1024**2), ("50mib", 50 * 1024**2),
    ("1.5GiB", 3 * 1024**3 // 2), ("1024B", 1024), ("4KiB/s", 4096), ("1EiB", 1024**6),
])
def test_parse_bytes_accepts_plain_bytes_and_binary_units(text, value):
    assert parse_bytes(text, "--throttle") == value


@pytest.mark.parametrize(("text", "why"), [
    ("50MB", "is not a size"), ("fifty", "is not a size"), ("-5", "is not a size"), ("", "is not a size"),
    ("0.5B", "is not a whole number of bytes"),
])
def test_parse_bytes_refuses_what_it_would_have_to_guess(text, why):
    with pytest.raises(ValueError, match=why):
        parse_bytes(text, "--throttle")


def test_human_seconds_says_days_for_a_snapshot_months_old():
    assert human_seconds(3 * 86400 + 5 * 3600) == "3d05h" and human_seconds(25 * 3600) == "25h00m"


def test_plan_throttle_in_mib_is_the_same_plan_as_in_bytes(tmp_path):
    hashes = []
    for i, throttle in enumerate(("52428800", "50MiB", "50MiB/s")):
        r = run_cli("plan", "--snapshot", str(SAMPLE), "--out", str(tmp_path / f"p{i}"), "--throttle", throttle)
        assert r.code == 0, r.stderr
        assert "at 50.0 MiB/s" in r.stderr and "GiB to copy" in r.stderr
        manifest = json.loads((tmp_path / f"p{i}" / "plan.json").read_text())
        assert manifest["options"]["throttle_bytes_per_sec"] == 52428800
        hashes.append(manifest["plan_hash"])
    assert len(set(hashes)) == 1


@pytest.mark.parametrize(("throttle", "message"), [
    ("50MB", "error: Invalid value for '--throttle': '50MB' is not a size"),
    ("512B", "error: plan: --throttle must be at least 1024 bytes/s, got 512"),
])
def test_a_bad_throttle_is_one_line(tmp_path, throttle, message):
    r = run_cli("plan", "--snapshot", str(SAMPLE), "--out", str(tmp_path / "p"), "--throttle", throttle)
    assert r.code == 2 and r.stderr.strip().startswith(message) and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "p" / "plan.json").exists()
