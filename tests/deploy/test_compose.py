"""docker-compose.yml: valid for real Compose validators, and true to the project's own rules.

No Docker engine runs here, so the file is checked offline by
* Debian's ``docker-compose`` 1.29 (``config -q`` parses, interpolates, merges and
  validates against its schema), installed with apt when missing, and
* the ``compose-spec`` wheel (a Rust implementation of the Compose specification),
  installed with pip into build/test-tools when missing.
Each validator that can run must accept the file (with placeholder secrets) and reject a
broken copy; the test fails, never skips, when neither can run. Without its secrets the file
must be refused naming each one: by the test's own reading of Compose's interpolation always,
and by ``docker-compose`` as well when it runs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
TOOLS = ROOT / "build" / "test-tools"
COMPOSE_SPEC_PIN = "compose-spec==0.2.1"

AIRFLOW_SERVICES = ("airflow-api-server", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer")
REQUIRED_SERVICES = (
    "postgres", "airflow-init", *AIRFLOW_SERVICES, "spark-master", "spark-worker",
    "kafka-1", "kafka-2", "kafka-3", "kafka-setup",
)
MOUNTED_DIRS = ("dags", "plugins", "spark_jobs", "expectations", "config")
# $$, ${X}, ${X-d}, ${X:-d}, ${X?msg}, ${X:?msg}: Compose's interpolation forms.
_VAR = re.compile(r"\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\})")
# The secrets: each must be given, none has a default. Found by name as well, so a new one gets the rule.
SECRETS = ("POSTGRES_PASSWORD", "AIRFLOW_ADMIN_PASSWORD", "AIRFLOW_JWT_SECRET", "AIRFLOW_API_SECRET_KEY",
           "AIRFLOW_FERNET_KEY", "KAFKA_REBALANCE_APPROVAL_KEY")
_SECRET_NAME = re.compile(r"PASSWORD$|SECRET|FERNET_KEY|APPROVAL_KEY")
# What the validators interpolate: placeholders, so the file is checked as it is with a filled-in .env.
PLACEHOLDERS = {v: f"test-only-{v.lower().replace('_', '-')}" for v in SECRETS}


def _required(name: str) -> str:
    return f"{name} is required: set it in .env (see .env.example)"
_PINNED_TAG = re.compile(r"^(?P<repo>[a-z0-9][a-z0-9._/-]*):(?P<tag>[A-Za-z0-9][A-Za-z0-9._-]*)$")


# --------------------------------------------------------------------------- validators


def _docker_compose() -> str | None:
    found = shutil.which("docker-compose")
    if found or shutil.which("apt-get") is None or os.geteuid() != 0:
        return found
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "docker-compose"]
    if subprocess.run(install, env=env, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True)
        subprocess.run(install, env=env, capture_output=True)
    return shutil.which("docker-compose")


def _compose_spec() -> ModuleType | None:
    target = TOOLS / "compose-spec"
    if str(target) not in sys.path:
        sys.path.insert(0, str(target))
    try:
        import compose_spec
    except ImportError:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), COMPOSE_SPEC_PIN],
            capture_output=True, text=True,
        )
        if done.returncode != 0:
            return None
        try:
            import compose_spec
        except ImportError:
            return None
    return compose_spec


def _interpolate(value: Any, env: dict[str, str], missing: list[tuple[str, str]]) -> Any:
    """Compose's variable substitution over ``env`` alone: ``${X:-d}`` -> d when X is unset or empty,
    ``${X-d}`` when unset, ``$$`` -> $. A ``${X:?msg}`` (``${X?msg}``) whose X is unset or empty (unset)
    is what stops Compose: it is added to ``missing`` as (X, msg), every one of them, not just the first."""
    if isinstance(value, str):
        def substitute(m: re.Match[str]) -> str:
            if m.group(0) == "$$":
                return "$"
            name, op, arg = m.groups()
            got = env.get(name)
            unset = got is None or (op is not None and op.startswith(":") and got == "")
            if op is not None and unset:
                if op.endswith("?"):
                    missing.append((name, arg))
                    return ""
                return arg
            return got or ""

        return _VAR.sub(substitute, value)
    if isinstance(value, dict):
        return {k: _interpolate(v, env, missing) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, env, missing) for v in value]
    return value


def _run_docker_compose(exe: str, path: Path, secrets: dict[str, str]) -> tuple[bool, str]:
    # Only the given variables: neither the caller's environment nor a developer's .env.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "POSTGRES", "KAFKA", "SPARK"))}
    no_env_file = TOOLS / "empty.env"
    no_env_file.parent.mkdir(parents=True, exist_ok=True)
    no_env_file.write_text("")
    done = subprocess.run(
        [exe, "--project-directory", str(ROOT), "--env-file", str(no_env_file), "-f", str(path), "config", "-q"],
        capture_output=True, text=True, cwd=ROOT, env={**env, **secrets}, timeout=120,
    )
    return done.returncode == 0, done.stderr + done.stdout


def _check_with_docker_compose(exe: str, path: Path) -> tuple[bool, str]:
    return _run_docker_compose(exe, path, PLACEHOLDERS)


def _check_with_compose_spec(module: ModuleType, path: Path) -> tuple[bool, str]:
    # YAML anchors and merge keys are YAML's, resolved before Compose sees the model;
    # the Rust parser does not implement merge keys, so resolve them here as Compose does.
    missing: list[tuple[str, str]] = []
    data = _interpolate(yaml.safe_load(path.read_text(encoding="utf-8")), PLACEHOLDERS, missing)
    if missing:
        return False, f"required variables unset: {missing}"
    try:
        module.PyCompose.from_json(json.dumps(data)).to_spec()
    except Exception as exc:  # the binding raises ValueError or pydantic's ValidationError
        return False, str(exc)
    return True, ""


@pytest.fixture(scope="module")
def validators() -> dict[str, Any]:
    found: dict[str, Any] = {}
    exe = _docker_compose()
    if exe:
        found["docker-compose"] = lambda p: _check_with_docker_compose(exe, p)
    module = _compose_spec()
    if module is not None:
        found["compose-spec"] = lambda p: _check_with_compose_spec(module, p)
    if not found:
        pytest.fail("no Compose validator could run: apt-get install docker-compose and pip install "
                    f"{COMPOSE_SPEC_PIN} both failed")
    return found


def test_compose_file_passes_every_available_validator(validators: dict[str, Any]) -> None:
    for name, check in validators.items():
        ok, output = check(COMPOSE)
        assert ok, f"{name} rejects docker-compose.yml:\n{output}"


@pytest.mark.parametrize(
    "old,new",
    [
        ("condition: service_completed_successfully", "condition: service_finished"),
        ("      start_period: 30s\n", "      start_period: 30s\n      retries_max: 3\n"),
    ],
    ids=["bad-depends-on-condition", "unknown-healthcheck-key"],
)
def test_validators_reject_a_broken_copy(validators: dict[str, Any], tmp_path: Path, old: str, new: str) -> None:
    text = COMPOSE.read_text(encoding="utf-8")
    assert old in text
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(text.replace(old, new, 1), encoding="utf-8")
    for name, check in validators.items():
        ok, _ = check(broken)
        assert not ok, f"{name} accepted a broken file ({new!r})"


# --------------------------------------------------------------------------- our rules


@pytest.fixture(scope="module")
def services() -> dict[str, dict[str, Any]]:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))["services"]


def _one_shot(service: dict[str, Any]) -> bool:
    return str(service.get("restart", "no")) == "no"


def _dockerfile_bases(context: Path) -> list[str]:
    lines = (context / "Dockerfile").read_text(encoding="utf-8").splitlines()
    return [line.split()[1] for line in lines if line.upper().startswith("FROM ")]


def test_required_services_present(services: dict[str, dict[str, Any]]) -> None:
    missing = [s for s in REQUIRED_SERVICES if s not in services]
    assert not missing, f"missing services: {missing}"
    assert {s for s in services if _one_shot(services[s])} == {"airflow-init", "kafka-setup"}


def test_every_image_is_pinned_to_an_exact_tag(services: dict[str, dict[str, Any]]) -> None:
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert version
    for name, svc in services.items():
        image = svc.get("image")
        assert image, f"{name}: no image (a build-only service would get an unpinned, generated name)"
        m = _PINNED_TAG.match(image)
        assert m, f"{name}: image {image!r} has no tag"
        tag = m.group("tag")
        assert tag != "latest" and re.search(r"\d+\.\d+", tag), f"{name}: {image!r} is not an exact version tag"
        if "build" in svc:
            # Our own image: named after the package version, built FROM pinned bases only.
            assert tag == version.group(1), f"{name}: {image!r} should be tagged with the package version"
            for base in _dockerfile_bases(ROOT / svc["build"]["context"]):
                bm = _PINNED_TAG.match(base)
                assert bm and bm.group("tag") != "latest" and re.search(r"\d+\.\d+", bm.group("tag")), base
    assert services["airflow-scheduler"]["image"] == services["spark-master"]["image"]
    assert _dockerfile_bases(ROOT / "docker/airflow") == ["apache/airflow:3.3.2-python3.11"]
    assert all(services[k]["image"].startswith("apache/kafka:") for k in ("kafka-1", "kafka-2", "kafka-3"))


def test_image_requirements_match_the_lock_and_cover_the_package() -> None:
    lock = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, pin = line.split("==")
            lock[name.lower().replace("_", "-")] = pin
    image = {}
    for line in (ROOT / "docker/airflow/requirements.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            assert "==" in line, f"docker/airflow/requirements.txt: {line!r} is not pinned"
            name, pin = line.split("==")
            image[name.lower().replace("_", "-")] = pin
    for name, pin in image.items():
        assert lock.get(name) == pin, f"image pins {name}=={pin}, requirements.lock has {lock.get(name)}"
    pyproject = (ROOT / "pyproject.toml").read_text()
    deps_block = pyproject.split("dependencies = [", 1)[1].split("]", 1)[0]
    declared = {re.split(r"[<>=!~\[ ]", d.strip().strip('",'))[0].lower().replace("_", "-")
                for d in deps_block.splitlines() if d.strip().startswith('"')}
    # Airflow itself comes with the base image and is re-pinned on the pip command line.
    assert declared - {"apache-airflow"} <= set(image), f"not in the image: {sorted(declared - {'apache-airflow'} - set(image))}"


def test_project_folders_are_mounted_into_every_airflow_service(services: dict[str, dict[str, Any]]) -> None:
    for name in ("airflow-init", *AIRFLOW_SERVICES):
        mounts = {v.split(":")[0]: v.split(":")[1] for v in services[name]["volumes"]}
        for d in MOUNTED_DIRS:
            assert mounts.get(f"./{d}") == f"/opt/airflow/{d}", f"{name}: ./{d} is not mounted at /opt/airflow/{d}"
    assert (ROOT / "config").is_dir()
    # Executors read the same data paths as the driver.
    for name in ("spark-master", "spark-worker"):
        assert "rebalance-data:/opt/airflow/data" in services[name]["volumes"]


def test_connections_resolve_through_airflow(services: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*AIRFLOW_SERVICES, "airflow-init"):
        env = services[name]["environment"]
        assert "AIRFLOW_CONN_KAFKA_DEMO" in env and "AIRFLOW_CONN_SPARK_DEFAULT" in env, name
        assert env["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor"
    env = services["airflow-scheduler"]["environment"]
    monkeypatch.setenv("AIRFLOW_CONN_KAFKA_DEMO", env["AIRFLOW_CONN_KAFKA_DEMO"])
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", env["AIRFLOW_CONN_SPARK_DEFAULT"])
    from airflow.providers.apache.kafka.hooks.base import KafkaBaseHook
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    spark = SparkSubmitHook(conn_id="spark_default")._connection
    assert spark["master"] == "spark://spark-master:7077"
    master_cmd = services["spark-master"]["command"]
    assert master_cmd[master_cmd.index("--port") + 1] == "7077"
    assert "spark://spark-master:7077" in services["spark-worker"]["command"]

    kafka = KafkaBaseHook(kafka_config_id="kafka_demo")
    assert kafka.get_connection("kafka_demo").conn_type == "kafka"
    bootstrap = kafka._build_config()["bootstrap.servers"].split(",")
    advertised = {
        f"kafka-{i}": services[f"kafka-{i}"]["environment"]["KAFKA_ADVERTISED_LISTENERS"] for i in (1, 2, 3)
    }
    assert len(bootstrap) == 3
    for server in bootstrap:
        host = server.split(":")[0]
        assert f"PLAINTEXT://{server}" in advertised[host], f"{server} is not a listener {host} advertises"


def test_three_brokers_on_three_distinct_racks(services: dict[str, dict[str, Any]]) -> None:
    brokers = {name: s["environment"] for name, s in services.items() if s.get("image", "").startswith("apache/kafka:")
               and "KAFKA_NODE_ID" in s["environment"]}
    assert len(brokers) == 3
    assert len({env["KAFKA_BROKER_RACK"] for env in brokers.values()}) == 3
    assert sorted(env["KAFKA_NODE_ID"] for env in brokers.values()) == ["1", "2", "3"]
    voters = {env["KAFKA_CONTROLLER_QUORUM_VOTERS"] for env in brokers.values()}
    assert voters == {"1@kafka-1:9093,2@kafka-2:9093,3@kafka-3:9093"}
    assert all("controller" in env["KAFKA_PROCESS_ROLES"] for env in brokers.values())  # KRaft, no ZooKeeper
    assert all(env["KAFKA_AUTO_LEADER_REBALANCE_ENABLE"] == "false" for env in brokers.values())


def test_health_checks_on_every_long_running_service(services: dict[str, dict[str, Any]]) -> None:
    for name, svc in services.items():
        if _one_shot(svc):
            continue
        check = svc.get("healthcheck")
        assert check and not check.get("disable"), f"{name}: no health check"
        assert check["test"][0] in ("CMD", "CMD-SHELL"), f"{name}: health check {check['test']!r}"
    for name in AIRFLOW_SERVICES:
        deps = services[name]["depends_on"]
        assert deps["airflow-init"]["condition"] == "service_completed_successfully"
        assert deps["postgres"]["condition"] == "service_healthy"
    assert all(c["condition"] == "service_healthy" for c in services["kafka-setup"]["depends_on"].values())


def test_setup_job_creates_skewed_topics(services: dict[str, dict[str, Any]]) -> None:
    script = ROOT / "docker/kafka/create-skewed-topics.sh"
    assert "./docker/kafka:/opt/kafka-setup:ro" in services["kafka-setup"]["volumes"]
    assert services["kafka-setup"]["entrypoint"][-1] == "/opt/kafka-setup/create-skewed-topics.sh"
    text = script.read_text(encoding="utf-8")
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    assignments = re.findall(r'^create\s+\S+\s+"([0-9:,]+)"', text, re.M)
    assert len(assignments) >= 2
    replicas: Counter[int] = Counter()
    leaders: Counter[int] = Counter()
    for assignment in assignments:
        for part in assignment.split(","):
            ids = [int(x) for x in part.split(":")]
            assert len(set(ids)) == len(ids) and set(ids) <= {1, 2, 3}, part
            replicas.update(ids)
            leaders[ids[0]] += 1
    assert replicas.most_common(1)[0][0] == 1 and replicas[1] > 2 * replicas[3], replicas
    assert leaders[1] > leaders[2] + leaders[3], leaders


def test_every_secret_is_required_and_none_has_a_default() -> None:
    text = COMPOSE.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    for name, svc in data["services"].items():
        for key, value in (svc.get("environment") or {}).items():
            if _SECRET_NAME.search(key):
                m = _VAR.fullmatch(str(value))
                assert m and m.group(1) in SECRETS, f"{name}.{key} = {value!r} is not one of the secret variables"
    # Every reference, the database URL's included, is the required form with its own name.
    references = [m.groups() for m in _VAR.finditer(text) if m.group(1) and _SECRET_NAME.search(m.group(1))]
    assert {name for name, _, _ in references} == set(SECRETS)
    for name, op, arg in references:
        assert (op, arg) == (":?", _required(name)), f"${{{name}{op or ''}{arg or ''}}} is not ${{{name}:?{_required(name)}}}"
    db_url = data["x-airflow-common"]["environment"]["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    assert f":${{POSTGRES_PASSWORD:?{_required('POSTGRES_PASSWORD')}}}@postgres:" in db_url


def test_without_its_secrets_the_file_is_refused_naming_each_one(validators: dict[str, Any]) -> None:
    data = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    missing: list[tuple[str, str]] = []
    _interpolate(data, {}, missing)
    assert sorted(set(missing)) == sorted((v, _required(v)) for v in SECRETS)
    for absent in SECRETS:  # each alone, and empty counts as unset (a .env copied without filling it in)
        missing = []
        _interpolate(data, {**PLACEHOLDERS, absent: ""}, missing)
        assert {name for name, _ in missing} == {absent}
    missing = []
    resolved = _interpolate(data, PLACEHOLDERS, missing)
    assert not missing
    assert resolved["services"]["postgres"]["environment"]["POSTGRES_PASSWORD"] == PLACEHOLDERS["POSTGRES_PASSWORD"]
    scheduler = resolved["services"]["airflow-scheduler"]["environment"]
    assert f":{PLACEHOLDERS['POSTGRES_PASSWORD']}@postgres:" in scheduler["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    assert scheduler["AIRFLOW__API_AUTH__JWT_SECRET"] == PLACEHOLDERS["AIRFLOW_JWT_SECRET"]
    # Compose itself, when it can run here, refuses the same way.
    exe = shutil.which("docker-compose") if "docker-compose" in validators else None
    for absent in SECRETS if exe else ():
        ok, output = _run_docker_compose(exe, COMPOSE, {k: v for k, v in PLACEHOLDERS.items() if k != absent})
        assert not ok and _required(absent) in output, f"docker-compose without {absent}: {output}"
    if exe:
        ok, output = _run_docker_compose(exe, COMPOSE, {})
        assert not ok and any(_required(v) in output for v in SECRETS), output


def test_every_variable_documented() -> None:
    text = COMPOSE.read_text(encoding="utf-8")
    used = {m.group(1) for m in _VAR.finditer(text) if m.group(1)}
    documented = set(re.findall(r"^([A-Z0-9_]+)=", (ROOT / ".env.example").read_text(), re.M))
    assert used <= documented, f"not in .env.example: {sorted(used - documented)}"
    assert ".env" in (ROOT / ".gitignore").read_text().splitlines()
