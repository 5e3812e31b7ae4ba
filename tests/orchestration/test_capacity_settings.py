"""Broker capacity in clusters.yaml and the trigger form: the same map as ``plan --capacity``, one line per problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.orchestration.clusters_config import load_clusters
from kafka_rebalance.orchestration.plan_params import plan_options, planner_settings
from kafka_rebalance.orchestration.trigger_form import _typed
from kafka_rebalance.snapshot.model import Capacity
from tests.support.clusters import part, snapshot

CLUSTER = """
defaults:
  capacity: {default: {network_in_bytes_per_sec: 125MB/s}}
clusters:
  - cluster_id: c1
    source: simulated:s.json
    defaults:
      capacity: {default: {disk_bytes: 1TB}, brokers: {"1": {disk_bytes: %s}}}
"""


def test_a_clusters_capacity_reaches_the_plan_and_the_form_overrides_it(tmp_path: Path) -> None:
    path = tmp_path / "clusters.yaml"
    path.write_text(CLUSTER % "2TB")
    cfg = load_clusters(path)
    defaults = cfg.effective_defaults(cfg.clusters[0])
    snap = snapshot([0, 1], [part("t", 0, [0])])
    options = plan_options(snap, {}, None, defaults)
    # the cluster's own capacity replaces the file-wide one (a setting, as every other)
    assert options.capacity.resolve([0, 1]) == {0: Capacity(disk_bytes=10**12), 1: Capacity(disk_bytes=2 * 10**12)}
    assert plan_options(snap, {"capacity": None}, None, defaults).capacity.empty
    assert planner_settings({"capacity": {"brokers": {"1": {"disk_bytes": "2Tb"}}}}, defaults)[1] == {
        "capacity": "capacity.brokers.1.disk_bytes: '2Tb' is ambiguous: a lowercase b means bits; write 2TB "
                    "(2 x 1000^4 bytes) or 2TiB (2 x 1024^4 bytes)"}


def test_a_bad_capacity_in_clusters_yaml_is_one_line_naming_the_cluster_field_and_value(tmp_path: Path) -> None:
    path = tmp_path / "clusters.yaml"
    path.write_text(CLUSTER % "0")
    with pytest.raises(RebalanceError) as info:
        load_clusters(path)
    assert str(info.value) == (f"{path}: clusters.0.defaults.capacity (cluster c1): Value error, capacity.brokers.1."
                               "disk_bytes: must be at least 1 byte (a whole number, or a size such as 2TiB or 125MB/s), got 0")
    path.write_text("defaults:\n  capacity: {brokers: {1: {disk_bytes: 1}}}\nclusters: []\n")
    with pytest.raises(RebalanceError, match=r"defaults: Value error, capacity.brokers: broker ids belong to one cluster"):
        load_clusters(path)


def test_the_forms_capacity_field_is_json_text() -> None:
    schema = {"type": ["null", "object"]}
    assert _typed(['{"default": {"disk_bytes": "1TB"}}'], schema, "capacity") == {"default": {"disk_bytes": "1TB"}}
    assert _typed([""], schema, "capacity") is None
    with pytest.raises(ValueError, match=r"^capacity: not JSON, got '\{disk'"):
        _typed(["{disk"], schema, "capacity")
    with pytest.raises(ValueError, match=r"^capacity: must be a JSON object, got '\[1\]'"):
        _typed(["[1]"], schema, "capacity")
