"""Relief mode (``relieve``) in clusters.yaml, the trigger form and the approval text: the flag's one definition."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.orchestration.approval_text import relief_line
from kafka_rebalance.orchestration.clusters_config import PlannerDefaults, load_clusters
from kafka_rebalance.orchestration.plan_params import plan_options, planner_form, planner_settings
from kafka_rebalance.orchestration.trigger_form import _typed, form_fields
from tests.support.clusters import part, snapshot


def test_a_cluster_may_stand_in_relief_mode_and_a_run_may_ask_for_it(tmp_path: Path) -> None:
    path = tmp_path / "clusters.yaml"
    path.write_text("clusters:\n  - {cluster_id: c1, source: kafka_c1, defaults: {relieve: true}}\n"
                    "  - {cluster_id: c2, source: kafka_c2}\n")
    cfg = load_clusters(path)
    snap = snapshot([0, 1], [part("t", 0, [0])])
    standing, plain = (cfg.effective_defaults(c) for c in cfg.clusters)
    assert plan_options(snap, {}, None, standing).relieve is True
    assert plan_options(snap, {}, None, plain).relieve is False
    assert plan_options(snap, {"relieve": True}, None, plain).relieve is True  # the form's checkbox
    assert plan_options(snap, {"relieve": False}, None, standing).relieve is False  # unticked for this run
    assert planner_settings({"relieve": "yes please"}, plain)[1] == {
        "relieve": "relieve must be true or false, got 'yes please'"}


def test_a_bad_relieve_in_clusters_yaml_is_one_line_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "clusters.yaml"
    path.write_text("defaults: {relieve: maybe}\nclusters: []\n")
    with pytest.raises(RebalanceError) as info:
        load_clusters(path)
    assert str(info.value).startswith(f"{path}: defaults.relieve: Input should be a valid boolean")
    assert "\n" not in str(info.value)


def test_the_form_shows_relieve_as_a_checkbox_starting_from_the_clusters_value() -> None:
    form = planner_form(PlannerDefaults(relieve=True))
    assert form["relieve"].schema == {"type": "boolean"} and form["relieve"].value is True
    field = next(f for f in form_fields(form) if f.name == "relieve")
    assert (field.widget, field.checked) == ("checkbox", True)
    assert field.help.startswith("Move only what brings every broker and log dir under --max-disk-usage")
    assert _typed(["on"], {"type": "boolean"}, "relieve") is True
    assert _typed([], {"type": "boolean"}, "relieve") is False  # an unticked box sends nothing


def test_the_approver_reads_that_the_plan_only_relieves() -> None:
    assert relief_line({"options": {"relieve": True, "max_disk_usage": 0.85}}) == (
        "- **Relief mode** (`--relieve`): only what brings every broker and log dir under 85 % of its disk (and "
        "under the selected network limits) moves, fewest bytes first; no balancing goal ran, brokers under their "
        "limits only receive, and no leader changes but a moved leader's\n")
    assert relief_line({"options": {"max_disk_usage": 0.85}}) == ""  # a plan made without it says nothing
