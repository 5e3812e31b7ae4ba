"""atomic.py: a path that cannot hold a new file or directory is named as the operator gave it."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from kafka_rebalance.atomic import atomic_directory, atomic_write

# /proc takes no new entries (ENOENT, for root too): a parent that exists and refuses.
REFUSING = Path("/proc/kafka-rebalance-test")


def test_a_directory_that_cannot_be_made_is_named_not_its_temporary() -> None:
    with pytest.raises(OSError) as raised, atomic_directory(REFUSING / "plan"):
        pytest.fail("the block ran")
    assert raised.value.filename == str(REFUSING / "plan")
    assert raised.value.errno == errno.ENOENT
    assert raised.value.strerror == "No such file or directory"


def test_a_file_that_cannot_be_written_is_named_not_its_temporary() -> None:
    with pytest.raises(OSError) as raised:
        atomic_write(Path("/proc/kafka-rebalance-test.json"), b"{}")
    assert raised.value.filename == "/proc/kafka-rebalance-test.json"
    assert "tmp" not in str(raised.value)


def test_a_directory_is_published_whole(tmp_path: Path) -> None:
    with atomic_directory(tmp_path / "out") as tmp:
        (tmp / "a.json").write_text("{}")
        assert not (tmp_path / "out").exists()
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["a.json"]
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temporary left beside it
