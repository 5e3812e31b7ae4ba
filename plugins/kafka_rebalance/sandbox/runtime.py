"""Real Apache Kafka from Maven Central jars: where the classpath lives and how to run Kafka's tools.

There is no Kafka tarball on our machines (only registries are reachable), so the broker and
Kafka's own command-line tools run as ``java -cp '.kafka/<version>/lib/*' <main class>``.
``scripts/kafka-classpath.sh`` (run by ``make``) resolves that folder once from ``kafka/pom.xml``.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.paths import PROJECT_ROOT

DEFAULT_KAFKA_VERSION = "4.1.1"

# Kafka's own tools by the name of their bin/ script, as operators know them.
TOOLS: dict[str, str] = {
    "kafka-server": "kafka.Kafka",
    "kafka-storage": "kafka.tools.StorageTool",
    "kafka-configs": "kafka.admin.ConfigCommand",
    "kafka-reassign-partitions": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
    "kafka-leader-election": "org.apache.kafka.tools.LeaderElectionCommand",
    "kafka-topics": "org.apache.kafka.tools.TopicCommand",
    "kafka-producer-perf-test": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-log-dirs": "org.apache.kafka.tools.LogDirsCommand",
}

# Main classes that moved between releases, tried before TOOLS' entry: the first one the release's jars hold
# runs. ConfigCommand left the Scala core (kafka.admin) for kafka-tools (org.apache.kafka.tools) after 4.1.
MOVED_TOOLS: dict[str, tuple[str, ...]] = {
    "kafka-configs": ("org.apache.kafka.tools.ConfigCommand",),
}

# Tools are short-lived clients: a small heap and the C1 compiler start them in about 2 s.
TOOL_JVM_OPTS = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto")


class KafkaRuntimeError(RebalanceError):
    """Java, Maven or the Kafka jars are missing, or a Kafka tool failed."""


def java_error_line(output: str) -> str:
    """The one line of a JVM's output that says what went wrong (the exception, not the stack)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in lines:
        if ("Exception" in line or "Error" in line) and not line.startswith("at "):
            message = line.split('Exception in thread "main" ', 1)[-1]
            cls, sep, rest = message.partition(": ")
            return f"{cls.rsplit('.', 1)[-1]}: {rest}" if sep and "." in cls and " " not in cls else message
    return lines[-1] if lines else "no output"


def kafka_home() -> Path:
    """Where resolved Kafka versions live (``.kafka/`` in the checkout unless overridden)."""
    return Path(os.environ.get("KAFKA_REBALANCE_KAFKA_DIR", PROJECT_ROOT / ".kafka"))


def java_binary() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return str(Path(java_home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise KafkaRuntimeError("Java 17+ is required to run Apache Kafka and no 'java' is on PATH "
                                "(Debian/Ubuntu: sudo apt-get install -y openjdk-17-jre-headless)")
    return found


@dataclass(frozen=True)
class KafkaRuntime:
    """One resolved Kafka version: its classpath folder and how to start its main classes."""

    version: str
    lib: Path

    @property
    def classpath(self) -> str:
        return str(self.lib / "*")

    def command(self, main_class: str, args: Sequence[str], jvm_opts: Sequence[str] = TOOL_JVM_OPTS) -> list[str]:
        return [java_binary(), *jvm_opts, "-cp", self.classpath, main_class, *args]

    def main_class(self, name: str) -> str:
        """The main class of a tool (by its bin/ script name) in this release."""
        for moved in MOVED_TOOLS.get(name, ()):
            if moved in _kafka_classes(self.lib):
                return moved
        return TOOLS.get(name, name)

    def tool(self, name: str, args: Sequence[str], *, timeout: float = 120.0, check: bool = True,
             stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run one of Kafka's own command-line tools (by its bin/ script name) and capture its output."""
        main_class = self.main_class(name)
        log_config = self.lib.parent / "tools-log4j2.properties"
        if not log_config.exists():
            # Tools log warnings to stderr only; their stdout stays the tool's own output.
            log_config.write_text("rootLogger.level = WARN\nrootLogger.appenderRef.e.ref = E\n"
                                  "appender.e.type = Console\nappender.e.name = E\nappender.e.target = SYSTEM_ERR\n"
                                  "appender.e.layout.type = PatternLayout\nappender.e.layout.pattern = %p %m%n\n")
        cmd = self.command(main_class, args, (*TOOL_JVM_OPTS, f"-Dlog4j2.configurationFile={log_config}"))
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, input=stdin,
                                  stdin=None if stdin is not None else subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise KafkaRuntimeError(f"{name} did not finish within {timeout:.0f}s: {' '.join(args)}") from None
        if check and done.returncode != 0:
            raise KafkaRuntimeError(f"{name} {' '.join(args)} exited {done.returncode}: "
                                    f"{java_error_line(done.stderr + chr(10) + done.stdout)}")
        return done


@functools.cache
def _kafka_classes(lib: Path) -> frozenset[str]:
    """The classes in a release's own jars (kafka*.jar), as dotted names; read once per process."""
    names: set[str] = set()
    for jar in sorted(lib.glob("kafka*.jar")):
        with zipfile.ZipFile(jar) as z:
            names.update(n[:-6].replace("/", ".") for n in z.namelist() if n.endswith(".class") and "$" not in n)
    return frozenset(names)


def resolve_runtime(version: str = DEFAULT_KAFKA_VERSION, *, fetch: bool = True) -> KafkaRuntime:
    """The classpath of Kafka ``version``, resolving it from Maven Central once if it is missing."""
    if not version or any(c not in "0123456789." for c in version) or version.count(".") != 2:
        raise KafkaRuntimeError(f"--kafka-version: {version!r} is not a Kafka release such as {DEFAULT_KAFKA_VERSION}")
    home = kafka_home()
    lib = home / version / "lib"
    if (home / version / ".resolved").exists() and lib.is_dir():
        return KafkaRuntime(version, lib)
    script = PROJECT_ROOT / "scripts" / "kafka-classpath.sh"
    if not fetch or not script.exists():
        raise KafkaRuntimeError(f"Apache Kafka {version} is not resolved in {lib}; run `scripts/kafka-classpath.sh {version}` "
                                "(needs Maven and access to Maven Central)")
    done = subprocess.run([str(script), version], capture_output=True, text=True,
                          env={**os.environ, "KAFKA_REBALANCE_KAFKA_DIR": str(home)})
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise KafkaRuntimeError(lines[0].removeprefix("error: ") if lines else f"could not resolve Apache Kafka {version}")
    return KafkaRuntime(version, lib)


@contextmanager
def quiet_kafka_client(level: int = logging.CRITICAL) -> Iterator[None]:
    """Silence kafka-python's retries while a cluster comes up, then put the caller's level back."""
    logger = logging.getLogger("kafka")
    before = logger.level
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.setLevel(before)
