"""`kafka-rebalance assign --placer ...`: one-line errors with exit 2, reproducible seeds.

Two runs go through a real subprocess (as operators run it); the rest in-process (a CLI start
costs seconds on a busy machine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.cli_inprocess import run_cli

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    return subprocess.run([sys.executable, "-m", "kafka_rebalance.cli", "assign", *args],
                          capture_output=True, text=True, env=env, timeout=120)


BASE = ("--brokers", "0:a,1:b,2:c,3:a,4:b,5:c", "--partitions", "6", "--replication-factor", "3")


def test_striped_with_a_seed_is_reproducible_and_rack_aware() -> None:
    first = cli(*BASE, "--placer", "striped", "--seed", "42")
    again = run_cli("assign", *BASE, "--placer", "striped", "--seed", "42")
    assert first.returncode == 0 and first.stdout == again.stdout and first.stderr == ""
    placement = json.loads(first.stdout)
    rack = {0: "a", 1: "b", 2: "c", 3: "a", 4: "b", 5: "c"}
    assert sorted(placement) == [str(p) for p in range(6)]
    assert all(len({rack[b] for b in replicas}) == 3 for replicas in placement.values())


def test_striped_without_a_seed_says_which_it_drew() -> None:
    r = run_cli("assign", *BASE, "--placer", "striped")
    assert r.code == 0
    seed = r.stderr.strip().removeprefix("striped placer: --seed ")
    assert run_cli("assign", *BASE, "--placer", "striped", "--seed", seed).stdout == r.stdout


def test_flags_that_do_not_apply_are_refused_in_one_line() -> None:
    r = cli(*BASE, "--placer", "striped", "--start-index", "1")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("error: --start-index does not apply to --placer striped: StripedReplicaPlacer "
                        "draws its starting points from --seed\n")
    cases = {
        ("--placer", "striped", "--start-index", "1"): "error: --start-index does not apply to --placer striped",
        ("--placer", "striped", "--replica-shift", "1"): "error: --replica-shift does not apply to --placer striped",
        ("--fenced", "1"): "error: --fenced applies only to --placer striped",
        ("--placer", "striped", "--fenced", "9"): "error: --fenced: broker 9 is not in --brokers",
        ("--placer", "striped", "--seed", str(1 << 63)):
            "error: Invalid value for '--seed': Input should be less than or equal to 9223372036854775807",
    }
    for args, start in cases.items():
        r = run_cli("assign", *BASE, *args)
        assert r.code == 2 and r.stdout == "", args
        assert r.stderr.startswith(start) and r.stderr.count("\n") == 1, (args, r.stderr)


def test_fenced_brokers_never_lead_and_all_fenced_is_kafkas_error() -> None:
    r = run_cli("assign", *BASE, "--placer", "striped", "--seed", "7", "--fenced", "0,1")
    assert r.code == 0
    assert all(replicas[0] not in (0, 1) for replicas in json.loads(r.stdout).values())
    r = run_cli("assign", *BASE, "--placer", "striped", "--seed", "7", "--fenced", "0,1,2,3,4,5")
    assert (r.code, r.stderr) == (2, "error: All brokers are currently fenced.\n")
