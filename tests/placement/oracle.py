"""Kafka's own Java code as a test oracle: harnesses in oracles/*.java, compiled with javac at test time.

Each harness reads many cases (one per line) on stdin and answers one line per case, so thousands
of cases cost one JVM start. Rack names travel hex-encoded (UTF-8), see oracles/OracleIO.java.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = Path(__file__).resolve().parent / "oracles"
JVM_FLAGS = ["-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss4m"]


def _need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"'{tool}' is not on PATH: the placement oracles need a JDK 17 (run `make java` for how to install it)")
    return path


def resolve_kafka_lib(script: str) -> Path:
    """Run one of scripts/kafka-*classpath.sh (instant and offline once resolved) and return its lib dir."""
    proc = subprocess.run([str(ROOT / "scripts" / script)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.fail(f"scripts/{script} failed: {proc.stderr.strip()[-800:]}")
    if script == "kafka-classpath.sh":
        pom = (ROOT / "kafka" / "pom.xml").read_text()
        version = re.search(r"<kafka.version>(.+?)</kafka.version>", pom).group(1)  # type: ignore[union-attr]
        return ROOT / ".kafka" / version / "lib"
    return Path(proc.stdout.strip().splitlines()[-1])


class Oracle:
    """One compiled harness: ``ask(lines)`` runs one JVM over all lines and returns its output lines."""

    def __init__(self, main: str, classes: Path, lib: Path | None) -> None:
        self.main = main
        self.classpath = f"{classes}:{lib}/*" if lib else str(classes)

    def ask(self, lines: Iterable[str], timeout: float = 120) -> list[str]:
        payload = "".join(f"{line}\n" for line in lines)
        proc = subprocess.run(
            [_need("java"), *JVM_FLAGS, "-cp", self.classpath, self.main],
            input=payload, capture_output=True, text=True, encoding="utf-8", timeout=timeout,
        )
        if proc.returncode != 0:
            pytest.fail(f"{self.main} exited {proc.returncode}: {proc.stderr.strip()[-1500:]}")
        return proc.stdout.splitlines()


def compile_oracles(out: Path, libs: dict[str, Path | None]) -> dict[str, Oracle]:
    """Compile every harness in ONE javac run (a javac start costs seconds on a busy machine).

    ``libs`` maps each harness's main class to the Kafka lib dir it runs against. They compile
    together against all of them (first dir wins for a class in two), but each RUNS with its own.
    """
    classpath = ":".join(f"{lib}/*" for lib in dict.fromkeys(v for v in libs.values() if v))
    cmd = [_need("javac"), "-J-Xmx256m", "-J-XX:+UseSerialGC", "-J-XX:TieredStopAtLevel=1",
           "-nowarn", "-encoding", "UTF-8", "-d", str(out)]
    if classpath:
        cmd += ["-cp", classpath]
    sources = [SOURCES / "OracleIO.java", *(SOURCES / f"{main}.java" for main in libs)]
    proc = subprocess.run([*cmd, *map(str, sources)], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.fail(f"javac: {proc.stderr.strip()[-1500:]}")
    return {main: Oracle(main, out, lib) for main, lib in libs.items()}


def broker_token(items: Iterable[tuple[int, str | None, bool]]) -> str:
    """Brokers for the harness: ``id``, ``id/<hex of UTF-8 rack>``, with ``*`` appended when fenced."""
    parts = []
    for broker_id, rack, fenced in items:
        part = str(broker_id) if rack is None else f"{broker_id}/{rack.encode().hex()}"
        parts.append(part + ("*" if fenced else ""))
    return ",".join(parts) or "-"
