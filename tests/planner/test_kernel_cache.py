"""Where numba keeps the planner's kernels (kernel_cache.py): a directory per version of their sources."""

from __future__ import annotations

from pathlib import Path

import numba

from kafka_rebalance.planner import kernel_cache


def test_the_cache_directory_changes_with_any_kernel_source_and_only_with_one(tmp_path: Path) -> None:
    (tmp_path / "goals").mkdir()
    (tmp_path / "a.py").write_text("from numba import njit\n")
    (tmp_path / "goals" / "b.py").write_text("from numba import njit\n\ndef f(): ...\n")
    (tmp_path / "plain.py").write_text("x = 1\n")
    first = kernel_cache.sources_digest(tmp_path)
    (tmp_path / "plain.py").write_text("x = 2\n")  # no kernel in it: the compiled code stays valid
    assert kernel_cache.sources_digest(tmp_path) == first
    (tmp_path / "goals" / "b.py").write_text("from numba import njit\n\ndef f(): return 1\n")  # a callee changed
    assert kernel_cache.sources_digest(tmp_path) != first


def test_numba_caches_under_this_versions_directory() -> None:
    assert numba.config.CACHE_DIR == str(kernel_cache.CACHE_DIR)  # type: ignore[attr-defined]
    assert kernel_cache.CACHE_DIR.name == f"numba-{kernel_cache.sources_digest()}"


def test_pruning_keeps_only_the_current_version(tmp_path: Path) -> None:
    current, old, other = tmp_path / "numba-aaaa", tmp_path / "numba-bbbb", tmp_path / "keep-me"
    for d in (current, old, other):
        d.mkdir()
    assert kernel_cache.prune_others(current) == [old]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep-me", "numba-aaaa"]
