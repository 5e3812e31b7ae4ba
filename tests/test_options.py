"""options.py: each option's range, the surfaces derived from its one definition, the options block of plan.json,
list flags and the threshold source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_rebalance.errors import PlanError, RebalanceError
from kafka_rebalance.options import PlanOptions, parse_list, resolve_threshold
from kafka_rebalance.snapshot import snapshot_from_dict

RANGE = "1.0 KiB/s to 8.0 EiB/s (1024..9223372036854775807 bytes/s; a Java long)"


def snap(configs: dict[str, str] | None = None, cluster_id: str = "c1"):
    return snapshot_from_dict({
        "cluster_id": cluster_id, "captured_at": "2026-01-01T00:00:00Z", "configs": configs or {},
        "brokers": [{"id": 1}, {"id": 2}, {"id": 10}],
        "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2], "leader": 1, "isr": [1, 2]}],
        "topics": {"empty-topic": {}},
    })


def problems(**options: object) -> str:
    with pytest.raises(PlanError) as err:
        PlanOptions(**options).check()
    return str(err.value)


def test_defaults_pass() -> None:
    PlanOptions().check()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"throttle_bytes_per_sec": 1023}, f"plan: --throttle must be within {RANGE}, got 1023"),
        ({"throttle_bytes_per_sec": 0}, f"plan: --throttle must be within {RANGE}, got 0"),
        ({"throttle_bytes_per_sec": -1}, f"plan: --throttle must be within {RANGE}, got -1"),
        ({"throttle_bytes_per_sec": 2**63},
         f"plan: --throttle must be within {RANGE}, got 9223372036854775808"),
        ({"max_partitions_per_batch": 0}, "plan: --max-partitions-per-batch must be at least 1, got 0"),
        ({"max_moves_per_broker": 2**31}, "plan: --max-moves-per-broker must be at most 2147483647, got 2147483648"),
        ({"max_new_replicas_per_partition": -1}, "plan: --max-new-replicas-per-partition must be at least 1, got -1"),
        ({"election_batch_size": 0}, "plan: --election-batch-size must be at least 1, got 0"),
        ({"ordering": "random"},
         "plan: --ordering must be one of small-first, large-first, under-replicated-first, got 'random'"),
        ({"optimizer": "best"}, "plan: --optimizer must be one of auto, exact, heuristic, got 'best'"),
        ({"replication_factor": 0}, "plan: --replication-factor must be at least 1, got 0"),
        ({"replication_factor": 2**31}, "plan: --replication-factor must be at most 2147483647, got 2147483648"),
        ({"decommission_brokers": (3, -1)}, "plan: --decommission-brokers must be within 0..2147483647, got -1"),
        ({"decommission_brokers": (2**31,)}, "plan: --decommission-brokers must be within 0..2147483647, got 2147483648"),
        ({"byte_tolerance": -0.1}, "plan: --byte-tolerance must be within 0..10 (a fraction of the mean), got -0.1"),
        ({"byte_tolerance": float("nan")}, "plan: --byte-tolerance must be within 0..10 (a fraction of the mean), got nan"),
        ({"threshold_percentage": 100.5}, "plan: --threshold-percentage must be within 0..100, got 100.5"),
        ({"throttle_efficiency": 0.04},
         "plan: --throttle-efficiency must be within 0.05..1 (the fraction of the throttle the brokers deliver), got 0.04"),
        ({"throttle_efficiency": 1.01},
         "plan: --throttle-efficiency must be within 0.05..1 (the fraction of the throttle the brokers deliver), got 1.01"),
        ({"throttle_efficiency": float("inf")},
         "plan: --throttle-efficiency must be within 0.05..1 (the fraction of the throttle the brokers deliver), got inf"),
    ],
)
def test_each_out_of_range_option_is_named_with_its_value(options: dict, message: str) -> None:
    assert problems(**options) == message


@pytest.mark.parametrize(
    "options",
    [{"throttle_bytes_per_sec": 1024}, {"throttle_bytes_per_sec": 2**63 - 1}, {"max_partitions_per_batch": 1},
     {"max_moves_per_broker": 2**31 - 1}, {"replication_factor": 1}, {"replication_factor": 2**31 - 1},
     {"byte_tolerance": 0}, {"byte_tolerance": 10}, {"threshold_percentage": 0}, {"threshold_percentage": 100},
     {"ordering": "under-replicated-first"}, {"optimizer": "heuristic"}, {"throttle_efficiency": 0.05},
     {"throttle_efficiency": 1}],
)
def test_the_limits_themselves_are_accepted(options: dict) -> None:
    PlanOptions(**options).check()


def test_every_problem_is_reported_at_once() -> None:
    assert problems(throttle_bytes_per_sec=1, ordering="x") == (
        f"plan: --throttle must be within {RANGE}, got 1; "
        "--ordering must be one of small-first, large-first, under-replicated-first, got 'x'")


def test_the_plan_command_has_one_flag_per_option_with_the_options_default() -> None:
    import typer

    from kafka_rebalance.cli import app

    command = typer.main.get_command(app).commands["plan"]  # type: ignore[attr-defined]
    flags = {p.opts[0]: p.default for p in command.params}
    assert flags == {
        "--snapshot": None, "--out": None, "--analysis": None, "--capacity": None,
        "--throttle": 52428800, "--max-partitions-per-batch": 50, "--max-moves-per-broker": 5,
        "--max-new-replicas-per-partition": 1, "--ordering": "small-first", "--exclude-topics": None,
        "--decommission-brokers": None, "--remove-log-dir": None, "--replication-factor": None, "--byte-tolerance": 0.1,
        "--byte-tolerance-below": None,
        "--replica-tolerance": 0.1, "--max-disk-usage": 0.85, "--relieve": False, "--network-tolerance": 0.1,
        "--election-batch-size": 1000, "--threshold-percentage": None, "--goals": None, "--optimizer": "auto",
        "--throttle-efficiency": 1.0, "--move-fixed-seconds": 2.0,
    }


def test_clusters_yaml_and_the_trigger_form_write_the_throttle_as_the_cli_does_and_leave_out_one_off_requests() -> None:
    from kafka_rebalance.orchestration.clusters_config import PlannerDefaults
    from kafka_rebalance.orchestration.plan_params import planner_form
    from kafka_rebalance.units import SIZE_PATTERN

    assert PlannerDefaults().model_dump() == {
        "capacity": None,  # the cluster's capacity map (snapshot/capacity.py), not an option of one value
        "throttle": 52428800, "max_partitions_per_batch": 50, "max_moves_per_broker": 5,
        "max_new_replicas_per_partition": 1, "ordering": "small-first", "exclude_topics": [],
        "decommission_brokers": [],  # a cluster's standing mark for removal (its own entry only)
        "byte_tolerance": 0.1, "byte_tolerance_below": None,  # None: byte_tolerance on both sides
        "replica_tolerance": 0.1, "max_disk_usage": 0.85, "relieve": False, "network_tolerance": 0.1,
        "election_batch_size": 1000, "threshold_percentage": None, "goals": [], "optimizer": "auto",
        "throttle_efficiency": 1.0, "move_fixed_seconds": 2.0,
    }
    form = planner_form(PlannerDefaults(throttle="20MiB/s"))
    assert set(form) == {"throttle", "max_partitions_per_batch", "max_moves_per_broker", "ordering",
                         "exclude_topics", "decommission_brokers", "max_disk_usage", "relieve", "threshold_percentage",
                         "goals", "optimizer", "capacity"}
    assert form["capacity"].schema == {"type": ["null", "object"]} and form["capacity"].value is None
    assert {name: (param.schema, param.description) for name, param in form.items() if name != "capacity"} == {
        "throttle": ({"type": "string", "pattern": SIZE_PATTERN},
                     "Replication throttle per broker (KIP-73) [1.0 KiB/s to 8.0 EiB/s]: bytes/s, or a number with a unit, "
                     "e.g. 50MiB/s (50 x 1024^2) or 50MB/s (50 x 1000^2)"),
        "max_partitions_per_batch": ({"type": "integer", "minimum": 1, "maximum": 2**31 - 1},
                                     "Partitions per reassignment batch [1..2147483647]"),
        "max_moves_per_broker": ({"type": "integer", "minimum": 1, "maximum": 2**31 - 1},
                                 "Replica moves into or out of one broker per batch [1..2147483647]"),
        "ordering": ({"enum": ["small-first", "large-first", "under-replicated-first"]},
                     "Which partitions move first (small-first | large-first | under-replicated-first)"),
        "exclude_topics": ({"type": "array", "items": {"type": "string"}},
                           "Topics never touched (comma-separated on the command line)"),
        "decommission_brokers": ({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 2**31 - 1}},
                                 "Broker ids to empty (comma-separated on the command line) [0..2147483647]"),
        "max_disk_usage": ({"type": "number", "minimum": 0.01, "maximum": 1},
                           "No broker's disks filled past this fraction of their capacity by the plan (capacity: the "
                           "log dirs' total bytes in the snapshot; brokers without one are unconstrained) [0.01..1]"),
        "relieve": ({"type": "boolean"},
                    "Move only what brings every broker and log dir under --max-disk-usage (and, with network-in "
                    "selected and network capacities known, under its network band), fewest bytes first; no balancing "
                    "goal runs, a broker under its limits is only ever a destination, and no leader changes but a "
                    "moved leader's"),
        "threshold_percentage": ({"type": ["null", "number"], "minimum": 0, "maximum": 100},
                                 "leader.imbalance.per.broker.percentage to apply when the cluster does not report one "
                                 "(KRaft); none given: 10 [0..100]"),
        "goals": ({"type": "array", "items": {"type": "string", "enum": [
                      "placement", "rack-safety", "disk-capacity", "replica-count", "bytes", "topic-spread",
                      "network-in", "network-out", "preferred-leader", "leader-imbalance"]}},
                  "Soft goals to optimise, highest priority first (comma-separated on the command line); the hard "
                  "goals always apply; none given: every goal but the opt-in topic-spread, network-in and network-out"),
        "optimizer": ({"enum": ["auto", "exact", "heuristic"]},
                      "exact = fewest bytes moved (MILP), heuristic = the goals, auto = exact where the cluster is small "
                      "enough (auto | exact | heuristic)"),
    }
    # The form starts from clusters.yaml's value, in the spelling that reads back as exactly it.
    assert form["throttle"].value == "20MiB/s"
    assert planner_form(PlannerDefaults(throttle="50MB"))["throttle"].value == "50MB/s"
    assert planner_form(PlannerDefaults(throttle=1500))["throttle"].value == "1500B/s"


def test_the_command_line_help_gives_each_range_in_the_flags_unit() -> None:
    from kafka_rebalance.options import option_fields

    helps = {f.flag: f.help_text() for f in option_fields()}
    assert helps["--throttle"] == ("Replication throttle per broker (KIP-73) [1.0 KiB/s to 8.0 EiB/s]: bytes/s, or a number "
                                   "with a unit, e.g. 50MiB/s (50 x 1024^2) or 50MB/s (50 x 1000^2)")
    assert helps["--throttle-efficiency"] == (
        "Fraction of the throttle the brokers deliver, for the time estimates (execute prints the figure a cluster "
        "showed) [0.05..1]")
    assert helps["--exclude-topics"] == "Topics never touched (comma-separated on the command line)"


def test_settings_from_clusters_yaml_and_the_form_become_option_values() -> None:
    from kafka_rebalance.options import option_fields

    by_setting = {f.setting: f for f in option_fields()}
    assert by_setting["throttle"].from_setting("512KiB/s") == 524288
    assert by_setting["throttle"].from_setting("20MB") == 20 * 10**6
    assert by_setting["throttle"].from_setting(20 * 2**20) == 20 * 2**20  # a bare number is bytes/s, as on the CLI
    assert by_setting["threshold_percentage"].from_setting(None) is None
    assert by_setting["threshold_percentage"].from_setting(7) == 7.0
    assert by_setting["exclude_topics"].from_setting(None) == ()
    assert by_setting["exclude_topics"].from_setting(["b", "a", "b"]) == ("a", "b")
    assert by_setting["decommission_brokers"].from_setting([7, 3, 7]) == (3, 7)
    assert by_setting["max_moves_per_broker"].from_setting(3) == 3
    assert by_setting["ordering"].from_setting("large-first") == "large-first"
    # goals are a priority order: kept as given, duplicates dropped
    assert by_setting["goals"].from_setting(["bytes", "replica-count", "bytes"]) == ("bytes", "replica-count")


def test_goals_are_checked_by_name_and_keep_their_order() -> None:
    assert parse_list("bytes, replica-count,bytes", "--goals", ordered=True) == ("bytes", "replica-count")
    assert problems(goals=("bytes", "disk", "cpu")) == (
        "plan: --goals: unknown goal(s) disk, cpu (goals: placement, rack-safety, disk-capacity, replica-count, bytes, "
        "topic-spread, network-in, network-out, preferred-leader, leader-imbalance)")
    PlanOptions(goals=("placement", "bytes")).check()
    assert PlanOptions(goals=("bytes", "replica-count")).manifest()["goals"] == ["bytes", "replica-count"]


def test_options_block_of_plan_json() -> None:
    opts = PlanOptions(exclude_topics=("b", "a"), decommission_brokers=(9, 3), replication_factor=3, byte_tolerance=0.2,
                       threshold_percentage=12.5, threshold_source="setting", optimizer="exact", ordering="large-first")
    assert opts.manifest() == {
        "throttle_bytes_per_sec": 52428800, "max_partitions_per_batch": 50, "max_moves_per_broker": 5,
        "max_new_replicas_per_partition": 1, "ordering": "large-first", "exclude_topics": ["a", "b"],
        "decommission_brokers": [3, 9], "byte_tolerance": 0.2, "replica_tolerance": 0.1, "max_disk_usage": 0.85,
        "network_tolerance": 0.1, "election_batch_size": 1000,
        "threshold_percentage": 12.5, "threshold_source": "setting", "replication_factor": 3, "goals": [],
        "optimizer": "exact", "throttle_efficiency": 1.0, "move_fixed_seconds": 2.0,
    }


def test_durations_use_the_rate_the_brokers_deliver_and_kafka_gets_the_throttle_itself() -> None:
    assert PlanOptions(throttle_bytes_per_sec=4096).delivered_rate == 4096
    assert PlanOptions(throttle_bytes_per_sec=4096, throttle_efficiency=0.75).delivered_rate == 3072.0
    assert PlanOptions(throttle_bytes_per_sec=4096, throttle_efficiency=0.75).rate_text() == (
        "the delivered rate 3,072 B/s (0.75 of the throttle 4,096 B/s)")
    assert PlanOptions(throttle_bytes_per_sec=4096).rate_text() == "the throttle 4,096 B/s"


def test_exclusions_and_decommissions_must_name_what_the_snapshot_has() -> None:
    s = snap()
    PlanOptions(exclude_topics=("t", "empty-topic"), decommission_brokers=(10,)).check_against(s)
    with pytest.raises(PlanError) as err:
        PlanOptions(exclude_topics=("t", "x", "y")).check_against(s)
    assert str(err.value) == "--exclude-topics: topic(s) x, y not in snapshot of c1"
    with pytest.raises(PlanError) as err:
        PlanOptions(decommission_brokers=(2, 7, 3)).check_against(s)
    assert str(err.value) == "--decommission-brokers: broker(s) 7, 3 not in snapshot of c1 (brokers: 1, 2, 10)"


def test_list_flags_are_sorted_unique_and_strict() -> None:
    assert parse_list(None, "--x") == () and parse_list("", "--x") == ()
    assert parse_list(" b, a ,,b ", "--exclude-topics") == ("a", "b")
    assert parse_list("10, 2,2,2147483647", "--decommission-brokers", as_int=True) == (2, 10, 2147483647)
    with pytest.raises(PlanError) as err:
        parse_list("3,x,2147483648,٣,-1", "--decommission-brokers", as_int=True)
    assert str(err.value) == "--decommission-brokers: x, 2147483648, ٣, -1 is not a broker id (expected e.g. 3,7)"


def write_summary(d: Path, value: object) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "summary.json").write_text(json.dumps(value))
    return d


def test_threshold_from_the_cluster_beats_the_analysis_and_the_setting(tmp_path: Path) -> None:
    s = snap({"leader.imbalance.per.broker.percentage": "25"})
    analysis = write_summary(tmp_path / "a", {"clusters": [{"cluster_id": "c1", "threshold_percentage": 40}]})
    assert resolve_threshold(s, 5.0, analysis) == (25.0, "cluster")
    assert resolve_threshold(snap(), 5.0, None) == (5.0, "setting")
    assert resolve_threshold(snap(), None, None) == (10.0, "default")


def test_an_analysis_threshold_of_zero_is_a_threshold(tmp_path: Path) -> None:
    analysis = write_summary(tmp_path / "a", {"clusters": [{"cluster_id": "c1", "threshold_percentage": 0}]})
    assert resolve_threshold(snap(), 5.0, analysis) == (0.0, "analysis")


def test_threshold_from_the_analysis_of_this_cluster(tmp_path: Path) -> None:
    analysis = write_summary(tmp_path / "a", {"clusters": [
        {"cluster_id": "other", "threshold_percentage": 1}, "junk", {"cluster_id": "c1", "threshold_percentage": 40}]})
    assert resolve_threshold(snap(), 5.0, analysis) == (40.0, "analysis")


@pytest.mark.parametrize(
    ("summary", "message"),
    [
        ({"clusters": {}}, "{path}: field 'clusters' must be a list"),
        ([], "{path}: field 'clusters' must be a list"),
        ({"clusters": [{"cluster_id": "other"}]}, "{path}: no entry for cluster_id 'c1' in 'clusters'"),
        ({"clusters": [{"cluster_id": "c1", "threshold_percentage": "40"}]},
         "{path}: clusters[cluster_id=c1].threshold_percentage must be 0..100, got '40'"),
        ({"clusters": [{"cluster_id": "c1", "threshold_percentage": 101}]},
         "{path}: clusters[cluster_id=c1].threshold_percentage must be 0..100, got 101"),
    ],
)
def test_bad_analysis_summaries_are_named(tmp_path: Path, summary: object, message: str) -> None:
    analysis = write_summary(tmp_path / "a", summary)
    with pytest.raises(RebalanceError) as err:
        resolve_threshold(snap(), None, analysis)
    assert str(err.value) == message.format(path=analysis / "summary.json")


def test_missing_or_unreadable_analysis_is_named(tmp_path: Path) -> None:
    with pytest.raises(RebalanceError) as err:
        resolve_threshold(snap(), None, tmp_path / "nowhere")
    assert str(err.value) == f"{tmp_path / 'nowhere'}: no summary.json (give the Spark job's output directory)"
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "summary.json").write_text("{not json")
    with pytest.raises(RebalanceError) as err:
        resolve_threshold(snap(), None, tmp_path / "bad")
    assert str(tmp_path / "bad" / "summary.json") in str(err.value) and "\n" not in str(err.value)



@pytest.mark.parametrize(("throttle", "value"), [
    ("50MB", 50 * 1000**2), ("50MB/s", 50 * 1000**2), ("50MiB", 50 * 2**20), ("50MiB/s", 50 * 2**20), ("50KiB", 50 * 1024),
    ("1GiB", 2**30), ("52428800", 52428800), ("50 mib/s", 50 * 2**20), (52428800, 52428800),
])
def test_the_forms_throttle_takes_the_clis_spellings(throttle: object, value: int) -> None:
    from kafka_rebalance.orchestration.plan_params import planner_values

    assert planner_values({"throttle": throttle})["throttle_bytes_per_sec"] == value


@pytest.mark.parametrize(("throttle", "message"), [
    ("0", f"run parameters: throttle must be within {RANGE}, got 0"),
    (0, f"run parameters: throttle must be within {RANGE}, got 0"),
    ("0 MiB/s", f"run parameters: throttle must be within {RANGE}, got 0"),
    ("1023B/s", f"run parameters: throttle must be within {RANGE}, got 1023"),
    ("8EiB/s", f"run parameters: throttle must be within {RANGE}, got 9223372036854775808"),
    ("-50MiB/s", "run parameters: throttle: '-50MiB/s' is negative; a size or rate is at least 0"),
    ("fast", "run parameters: throttle: 'fast' is not a size or rate; give bytes (52428800) or a number with a unit"),
    ("50Mb/s", "run parameters: throttle: '50Mb/s' is ambiguous: a lowercase b means bits"),
    (50.5, "run parameters: throttle: expected bytes/s or a size such as 50MiB/s, got 50.5"),
])
def test_a_bad_throttle_in_the_run_parameters_is_one_line_naming_the_field_never_clamped(throttle: object, message: str) -> None:
    from kafka_rebalance.orchestration.plan_params import planner_values

    with pytest.raises(PlanError) as err:
        planner_values({"throttle": throttle})
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_every_bad_run_parameter_is_named_at_once_and_the_old_throttle_name_is_read() -> None:
    from kafka_rebalance.orchestration.plan_params import planner_values

    with pytest.raises(PlanError) as err:
        planner_values({"throttle_mb_per_sec": 0, "throttle": "50MiB/s", "max_moves_per_broker": 0})
    # An API trigger's older name wins over the form's default under the new one, and is checked like it.
    assert str(err.value) == (
        f"run parameters: throttle must be within {RANGE}, got 0; max_moves_per_broker must be at least 1, got 0")
    assert planner_values({"throttle_mb_per_sec": 40, "throttle": "50MiB/s"})["throttle_bytes_per_sec"] == 40 * 1024 * 1024


def test_the_bands_lower_side_is_recorded_only_when_given_and_read_back() -> None:
    assert "byte_tolerance_below" not in PlanOptions().manifest()
    assert PlanOptions(byte_tolerance=0.2).byte_tolerance_low == 0.2
    for below in (0.0, 0.35):
        opts = PlanOptions(byte_tolerance=0.2, byte_tolerance_below=below)
        assert opts.manifest()["byte_tolerance_below"] == below and opts.byte_tolerance_low == below
        assert PlanOptions.from_manifest(opts.manifest()) == opts
    with pytest.raises(PlanError, match=r"--byte-tolerance-below"):
        PlanOptions(byte_tolerance_below=1.5).check()
