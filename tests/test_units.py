"""One owner of sizes and rates: IEC units out, the same units (or plain bytes) in."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kafka_rebalance.units import SIZE_PATTERN, exact_rate, human_bytes, human_rate, human_seconds, parse_bytes
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


SPELLINGS = [
    ("52428800", 52428800), ("52428800B", 52428800), ("52428800/s", 52428800), ("52428800 B/s", 52428800),
    ("50MB", 50 * 1000**2), ("50MB/s", 50 * 1000**2), ("50 MB / s", 50 * 1000**2), ("50mB", 50 * 1000**2),
    ("50kB", 50_000), ("50KB/s", 50_000), ("2GB", 2 * 1000**3), ("1TB", 1000**4), ("1PB", 1000**5), ("8EB", 8 * 1000**6),
    ("50MiB", 50 * 1024**2), ("50MiB/s", 50 * 1024**2), ("50 MiB/s", 50 * 1024**2), ("50mib", 50 * 1024**2),
    ("50MIB/S", 50 * 1024**2), ("50KiB", 50 * 1024), ("4kib/s", 4096), ("1GiB", 1024**3), ("1.5GiB", 3 * 1024**3 // 2),
    ("2TiB", 2 * 1024**4), ("1PiB", 1024**5), ("7EiB", 7 * 1024**6), ("1024B", 1024), ("0.5KiB", 512), ("1.5MB", 1_500_000),
    ("0", 0),  # a size; whether 0 is a usable throttle is the option's range to say (below)
]


@pytest.mark.parametrize(("text", "value"), SPELLINGS)
def test_parse_bytes_accepts_plain_bytes_and_decimal_and_binary_units(text, value):
    assert parse_bytes(text, "--throttle") == value


@pytest.mark.parametrize(("text", "message"), [
    ("fifty", "--throttle: 'fifty' is not a size or rate; give bytes (52428800) or a number with a unit: KB, MB, GB, TB, PB, "
              "EB (powers of 1000) or KiB, MiB, GiB, TiB, PiB, EiB (powers of 1024), /s optional, e.g. 50MB/s or 50MiB/s"),
    ("", "--throttle: '' is not a size or rate"),
    ("50 GB/sec", "--throttle: '50 GB/sec' is not a size or rate"),
    ("50Mbps", "--throttle: '50Mbps' is not a size or rate"),
    ("1e9", "--throttle: '1e9' is not a size or rate"),
    ("50ZiB", "--throttle: '50ZiB' is not a size or rate"),
    ("-5", "--throttle: '-5' is negative; a size or rate is at least 0"),
    ("-50MiB/s", "--throttle: '-50MiB/s' is negative; a size or rate is at least 0"),
    ("50Mb", "--throttle: '50Mb' is ambiguous: a lowercase b means bits; write 50MB (50 x 1000^2 bytes) or 50MiB (50 x 1024^2 bytes)"),
    ("50mb/s", "--throttle: '50mb/s' is ambiguous: a lowercase b means bits"),
    ("1024b", "--throttle: '1024b' is ambiguous: a lowercase b means bits; write 1024B for bytes"),
    ("50M", "--throttle: '50M' has no B; write 50MB (50 x 1000^2 bytes) or 50MiB (50 x 1024^2 bytes)"),
    ("4Ki", "--throttle: '4Ki' has no B; write 4KB (4 x 1000 bytes) or 4KiB (4 x 1024 bytes)"),
    ("0.5B", "--throttle: '0.5B' is not a whole number of bytes (0.50)"),
    ("9" * 80, f"--throttle: '{'9' * 64}'... is not a size (80 characters)"),
])
def test_parse_bytes_refuses_what_it_would_have_to_guess_in_one_line(text, message):
    with pytest.raises(ValueError) as err:
        parse_bytes(text, "--throttle")
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_the_forms_pattern_accepts_exactly_the_spellings_parse_bytes_reads():
    pattern = re.compile(SIZE_PATTERN)
    assert all(pattern.search(text) for text, _ in SPELLINGS)
    assert not any(pattern.search(text) for text in ("fifty", "", "-5", "50Mb", "50mb/s", "1024b", "50M", "50 GB/sec", "1e9"))


@pytest.mark.parametrize("n", [1024, 1000, 1500, 50 * 1024**2, 50 * 1000**2, 3 * 1024**6, 2**63 - 1])
def test_exact_rate_reads_back_as_the_same_number(n):
    assert parse_bytes(exact_rate(n), "x") == n


def test_human_seconds_says_days_for_a_snapshot_months_old():
    assert human_seconds(3 * 86400 + 5 * 3600) == "3d05h" and human_seconds(25 * 3600) == "25h00m"


def test_plan_throttle_in_mib_is_the_same_plan_as_in_bytes(tmp_path):
    hashes = []
    for i, throttle in enumerate(("52428800", "50MiB", "50MiB/s", "50 mib/s")):
        r = run_cli("plan", "--snapshot", str(SAMPLE), "--out", str(tmp_path / f"p{i}"), "--throttle", throttle)
        assert r.code == 0, r.stderr
        assert "at 50.0 MiB/s" in r.stderr and "GiB to copy" in r.stderr
        manifest = json.loads((tmp_path / f"p{i}" / "plan.json").read_text())
        assert manifest["options"]["throttle_bytes_per_sec"] == 52428800
        hashes.append(manifest["plan_hash"])
    assert len(set(hashes)) == 1


def test_plan_throttle_in_decimal_megabytes(tmp_path):
    for i, throttle in enumerate(("50MB", "50MB/s")):
        r = run_cli("plan", "--snapshot", str(SAMPLE), "--out", str(tmp_path / f"p{i}"), "--throttle", throttle)
        assert r.code == 0, r.stderr
        assert "at 47.7 MiB/s" in r.stderr  # 50 x 10^6 bytes/s, in the one output unit
        assert json.loads((tmp_path / f"p{i}" / "plan.json").read_text())["options"]["throttle_bytes_per_sec"] == 50_000_000


RANGE = "1.0 KiB/s to 8.0 EiB/s (1024..9223372036854775807 bytes/s; a Java long)"


@pytest.mark.parametrize(("throttle", "message"), [
    ("0", f"error: plan: --throttle must be within {RANGE}, got 0"),
    ("0MiB/s", f"error: plan: --throttle must be within {RANGE}, got 0"),
    ("512B", f"error: plan: --throttle must be within {RANGE}, got 512"),
    ("8EiB/s", f"error: plan: --throttle must be within {RANGE}, got 9223372036854775808"),
    ("99999999999999999999", f"error: plan: --throttle must be within {RANGE}, got 99999999999999999999"),
    ("-5", "error: Invalid value for '--throttle': '-5' is negative; a size or rate is at least 0"),
    ("fast", "error: Invalid value for '--throttle': 'fast' is not a size or rate"),
    ("50Mb/s", "error: Invalid value for '--throttle': '50Mb/s' is ambiguous: a lowercase b means bits"),
])
def test_a_bad_throttle_is_one_line(tmp_path, throttle, message):
    r = run_cli("plan", "--snapshot", str(SAMPLE), "--out", str(tmp_path / "p"), "--throttle", throttle)
    assert r.code == 2 and r.stderr.strip().startswith(message) and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "p" / "plan.json").exists()
