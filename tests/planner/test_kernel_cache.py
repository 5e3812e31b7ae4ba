"""Where numba keeps the planner's kernels (kernel_cache.py): a directory per version of their sources."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import numba
from numba.core.caching import IndexDataCacheFile

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


def _save_entries(path: str, tag: str, n: int) -> None:
    cache = IndexDataCacheFile(cache_path=path, filename_base="kernel", source_stamp="stamp")
    for i in range(n):
        cache.save((tag, i), (tag, i))


def test_processes_saving_into_one_cache_at_once_keep_every_entry_with_its_own_data(tmp_path: Path) -> None:
    # numba's own index and data files, written by two processes at once (as make test's workers and Airflow's do):
    # unlocked, a run of this kept 166 of the 300 entries and pointed 22 at the other process's data.
    fork = multiprocessing.get_context("fork")  # the children run this process's numba, lock installed
    workers = [fork.Process(target=_save_entries, args=(str(tmp_path), tag, 150)) for tag in ("a", "b")]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert [w.exitcode for w in workers] == [0, 0]
    cache = IndexDataCacheFile(cache_path=str(tmp_path), filename_base="kernel", source_stamp="stamp")
    keys = {(tag, i) for tag in ("a", "b") for i in range(150)}
    assert {key: cache.load(key) for key in keys} == {key: key for key in keys}
    assert (tmp_path / kernel_cache.LOCK_FILE).exists()


def test_a_cache_whose_lock_file_cannot_be_made_is_still_read_and_written(tmp_path: Path) -> None:
    # (as a directory no process may write to: there the lock is skipped, and numba's own writes fail as before)
    (tmp_path / kernel_cache.LOCK_FILE).mkdir()
    cache = IndexDataCacheFile(cache_path=str(tmp_path), filename_base="kernel", source_stamp="stamp")
    assert cache.load(("a", 1)) is None
    cache.save(("a", 1), "data")
    assert cache.load(("a", 1)) == "data"
