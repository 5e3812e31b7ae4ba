"""config/clusters.yaml parsing: good file, and typos named by file, cluster and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.orchestration.clusters_config import load_clusters

ROOT = Path(__file__).resolve().parents[2]


def test_bundled_clusters_file() -> None:
    cfg = load_clusters(ROOT / "config" / "clusters.yaml")
    demo = cfg.clusters[0]
    assert demo.cluster_id == "demo-eu-1" and demo.simulated and demo.dag_id == "kafka_rebalance_demo_eu_1"
    assert cfg.simulated_snapshot(demo) == (ROOT / "samples" / "sample-cluster.json").resolve()
    assert cfg.effective_defaults(demo).max_moves_per_broker == 5


def test_per_cluster_defaults_override_only_what_they_set(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(
        "defaults: {throttle: 20MiB/s, max_moves_per_broker: 3}\n"
        "clusters:\n  - {cluster_id: a, source: kafka_a, defaults: {throttle: 100MB/s}}\n"
    )
    cfg = load_clusters(f)
    eff = cfg.effective_defaults(cfg.clusters[0])
    assert (eff.throttle, eff.max_moves_per_broker) == (100 * 1000**2, 3)
    assert cfg.clusters[0].schedule == "*/30 * * * *"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("clusters:\n  - {cluster_id: 'a b', source: x}\n",
         "clusters.0.cluster_id: Value error, 'a b' has characters outside [a-zA-Z0-9._-]"),
        ('clusters:\n  - {cluster_id: "prod\\n$(touch CANARY)", source: x}\n',
         "clusters.0.cluster_id: Value error, 'prod\\n$(touch CANARY)' has characters outside [a-zA-Z0-9._-]"),
        ("clusters:\n  - {cluster_id: '-a', source: x}\n",
         "clusters.0.cluster_id: Value error, must start with a letter or digit and be at most 100 characters"),
        ('clusters:\n  - {cluster_id: "a\\nb", source: x, shedule: x}\n',
         "clusters.0.shedule (cluster 'a\\nb'): Extra inputs are not permitted"),
        ("clusters:\n  - {cluster_id: a, source: 'simulated:'}\n", "clusters.0.source (cluster a): Value error, simulated: needs a snapshot path"),
        ("clusters:\n  - {cluster_id: a, source: x, shedule: '@daily'}\n", "clusters.0.shedule (cluster a): Extra inputs are not permitted"),
        ("defaults: {ordering: random}\nclusters: []\n", "defaults.ordering: Input should be 'small-first'"),
        ("defaults: {throttle: 0}\nclusters: []\n",
         "defaults.throttle: Value error, must be within 1.0 KiB/s to 8.0 EiB/s (1024..9223372036854775807 bytes/s; a Java long), got 0"),
        ("defaults: {throttle: 0MiB/s}\nclusters: []\n", "defaults.throttle: Value error, must be within 1.0 KiB/s to 8.0 EiB/s"),
        ("defaults: {throttle: -50MiB/s}\nclusters: []\n", "defaults.throttle: Value error, '-50MiB/s' is negative"),
        ("defaults: {throttle: 8EiB/s}\nclusters: []\n",
         "defaults.throttle: Value error, must be within 1.0 KiB/s to 8.0 EiB/s (1024..9223372036854775807 bytes/s; a Java long), "
         "got 9223372036854775808"),
        ("defaults: {throttle: fast}\nclusters: []\n", "defaults.throttle: Value error, 'fast' is not a size or rate"),
        ("defaults: {throttle: 50Mb/s}\nclusters: []\n", "defaults.throttle: Value error, '50Mb/s' is ambiguous: a lowercase b means bits"),
        ("defaults: {throttle: 52428800.5}\nclusters: []\n",
         "defaults.throttle: Value error, expected bytes/s or a size such as 50MiB/s, got 52428800.5"),
        ("defaults: {throttle_mb_per_sec: 50, throttle: 50MiB/s}\nclusters: []\n",
         "defaults: Value error, throttle_mb_per_sec: the older name of throttle; give one of them, not both"),
        ("clusters:\n  - {cluster_id: a, source: x, defaults: {throttle_mb_per_sec: 0}}\n",
         "clusters.0.defaults.throttle (cluster a): Value error, must be within"),
        ("defaults: {throttle_efficiency: 1.2}\nclusters: []\n", "defaults.throttle_efficiency: Input should be less than or equal to 1"),
        ("defaults: {throttle_efficiency: .nan}\nclusters: []\n", "defaults.throttle_efficiency: Input should be a finite number"),
        ("clusters:\n  - {cluster_id: a, source: x}\n  - {cluster_id: a, source: y}\n", "cluster_id a listed more than once"),
        ("- just a list\n", "must be a mapping with a 'clusters' list"),
        ("clusters: [\n", "not valid YAML"),
        ("clusters:\n  - {cluster_id: a, source: x, windows: [{cron: '0 25 * * *', duration: 4h}]}\n",
         "clusters.0.windows.0 (cluster a): Value error, not a 5-field cron expression: '0 25 * * *'"),
        ("clusters:\n  - {cluster_id: a, source: x, windows: [{cron: '0 1 * * *', duration: forever}]}\n",
         "clusters.0.windows.0 (cluster a): Value error, expected a duration such as 4h, 90m or PT4H, got 'forever'"),
        ("clusters:\n  - {cluster_id: a, source: x, windows: [{cron: '0 1 * * *', duration: 1h, timezone: Utopia}]}\n",
         "clusters.0.windows.0 (cluster a): Value error, unknown time zone 'Utopia'"),
        ("clusters:\n  - {cluster_id: a, source: x, executor: {window_margin_seconds: -1}}\n",
         "clusters.0.executor.window_margin_seconds (cluster a): Input should be greater than or equal to 0"),
    ],
)
def test_bad_clusters_files_name_the_field(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "clusters.yaml"
    f.write_text(text)
    with pytest.raises(RebalanceError) as err:
        load_clusters(f)
    assert str(err.value).startswith(f"{f}: ")
    assert message in str(err.value)


@pytest.mark.parametrize("text", ['clusters:\n  - {cluster_id: "prod\\n$(touch CANARY)", source: x}\n',
                                  'clusters:\n  - {cluster_id: "a\\nb", source: x, shedule: x}\n'])
def test_a_cluster_id_holding_a_newline_is_shown_on_the_one_error_line(tmp_path: Path, text: str) -> None:
    f = tmp_path / "clusters.yaml"
    f.write_text(text)
    with pytest.raises(RebalanceError) as err:
        load_clusters(f)
    assert "\n" not in str(err.value) and "\\n" in str(err.value)


def test_windows_per_cluster(tmp_path: Path) -> None:
    from datetime import timedelta

    from kafka_rebalance.executor.windows import Window

    f = tmp_path / "c.yaml"
    f.write_text("clusters:\n  - cluster_id: a\n    source: kafka_a\n    windows:\n"
                 "      - {cron: '0 1 * * 1-5', duration: 4h}\n      - {cron: '30 22 * * 6', duration: PT90M, timezone: Europe/Berlin}\n")
    cluster = load_clusters(f).clusters[0]
    assert cluster.configured_windows() == (Window("0 1 * * 1-5", timedelta(hours=4), "UTC"),
                                            Window("30 22 * * 6", timedelta(minutes=90), "Europe/Berlin"))
    assert (cluster.executor.window_margin_seconds, cluster.executor.window_grace_seconds) == (300.0, 600.0)


def test_docker_clusters_file_is_valid() -> None:
    cfg = load_clusters(ROOT / "config" / "clusters.docker.yaml")
    live = next(c for c in cfg.clusters if not c.simulated)
    assert live.source == "kafka_demo"  # the connection docker-compose.yml defines


def test_a_clusters_rate_window_is_its_gathers_and_a_simulated_cluster_refuses_one(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("defaults: {max_disk_usage: 0.9}\nclusters:\n  - {cluster_id: a, source: kafka_a, rate_window_seconds: 60}\n"
                 "  - {cluster_id: b, source: kafka_b}\n")
    cfg = load_clusters(f)
    assert [c.rate_window_seconds for c in cfg.clusters] == [60.0, 0.0]
    assert cfg.effective_defaults(cfg.clusters[1]).max_disk_usage == 0.9
    for text, message in (
        ("clusters:\n  - {cluster_id: a, source: kafka_a, rate_window_seconds: 3601}\n",
         "clusters.0.rate_window_seconds (cluster a): Input should be less than or equal to 3600"),
        ("clusters:\n  - {cluster_id: a, source: 'simulated:s.json', rate_window_seconds: 10}\n",
         "clusters.0 (cluster a): Value error, rate_window_seconds: a simulated cluster reports its own produce rates"),
        ("defaults: {max_disk_usage: 0}\nclusters: []\n", "defaults.max_disk_usage: Input should be greater than or equal to 0.01"),
    ):
        f.write_text(text)
        with pytest.raises(RebalanceError) as err:
            load_clusters(f)
        assert message in str(err.value) and str(err.value).startswith(f"{f}: ")


def test_the_older_throttle_setting_is_still_read_in_mib_per_second(tmp_path) -> None:
    """clusters.yaml files written for an earlier version keep working: throttle_mb_per_sec counted MiB/s."""
    path = tmp_path / "clusters.yaml"
    path.write_text("defaults: {throttle_mb_per_sec: 50}\nclusters:\n  - {cluster_id: a, source: x, defaults: {throttle_mb_per_sec: 2.5}}\n")
    cfg = load_clusters(path)
    assert cfg.defaults.throttle == 50 * 1024 * 1024
    assert cfg.clusters[0].defaults.throttle == int(2.5 * 1024 * 1024)


def test_every_executor_setting_of_the_cli_reaches_the_dag(tmp_path) -> None:
    """clusters.yaml's executor block makes the same ExecSettings the CLI's flags make: none dropped on the way."""
    from kafka_rebalance.executor.settings import ExecSettings

    path = tmp_path / "clusters.yaml"
    path.write_text("clusters:\n  - {cluster_id: a, source: x, executor: {mode: batches, poll_interval_seconds: 2, "
                    "stall_seconds: 30, batch_timeout_seconds: 900, on_stall: stop, additional: true}}\n")
    settings = load_clusters(path).clusters[0].executor.settings()
    assert settings == ExecSettings(poll_interval=2, stall_seconds=30, batch_timeout=900, on_stall="stop", additional=True,
                                    mode="batches")
    # auto_throttle is built from the plan being run (its approved throttle and capacities) with the cluster's
    # floor and ceiling: execute --throttle auto and executor.throttle: auto (tests/orchestration/test_steps.py).
    assert set(ExecSettings.__dataclass_fields__) == {"poll_interval", "stall_seconds", "batch_timeout", "on_stall",
                                                      "additional", "mode", "auto_throttle"}
    assert load_clusters(path).clusters[0].executor.auto_bounds() is None
    path.write_text("clusters:\n  - {cluster_id: a, source: x, executor: {throttle: auto, throttle_floor: 1MiB/s, "
                    "throttle_ceiling: 40MB/s}}\n")
    assert load_clusters(path).clusters[0].executor.auto_bounds() == (1024 * 1024, 40 * 1000 * 1000)
