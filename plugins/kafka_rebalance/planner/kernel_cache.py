"""Where numba keeps the planner's compiled kernels: one directory per version of every kernel source together.

numba checks a cached kernel against its own source file only. A kernel that calls another file's kernel (the count
goal's search calls the vetoes in ``goals/compiled_vetoes.py``) would otherwise load stale machine code after that
other file changed, and plan with the old rule. Keyed by a hash of every planner source that uses numba, any change to
any of them starts a fresh cache. Imported by ``kafka_rebalance.planner`` before any kernel is defined (numba reads the
directory when a kernel is decorated).

Processes that compile into one cache at once (``make test``'s workers, Airflow's workers planning side by side on a
fresh install) must not corrupt it. numba names a new entry's data file after the index it read a moment before, with
no lock: two processes saving different signatures of one kernel together both take the same file name, and the index
can then point a signature at the other one's machine code (numba issue #10128; two processes saving 150 entries each
into one directory kept 166, 22 of them naming the other's data). ``locked_cache`` makes each save, and each load, hold
a lock on a file of the cache directory (exclusive to save, shared to load).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numba
from numba.core import caching

PLANNER = Path(__file__).resolve().parent
PREFIX = "numba-"


def sources_digest(root: Path = PLANNER) -> str:
    """A hash of every module under ``root`` that compiles with numba (path and text), in path order."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        text = path.read_bytes()
        if b"numba" in text:
            digest.update(str(path.relative_to(root)).encode() + b"\0" + text + b"\0")
    return digest.hexdigest()[:16]


def cache_root() -> Path:
    """Where every version's directory lives: ``NUMBA_CACHE_DIR`` when the operator set one, else beside the sources."""
    chosen = os.environ.get("NUMBA_CACHE_DIR")
    return Path(chosen) if chosen else PLANNER / "__pycache__"


def prune_others(current: Path) -> list[Path]:
    """Remove the directories of earlier source versions (``make kernels`` calls it); the ones removed."""
    gone = [p for p in current.parent.glob(f"{PREFIX}*") if p.is_dir() and p != current]
    for p in gone:
        shutil.rmtree(p, ignore_errors=True)
    return gone


CACHE_DIR = cache_root() / f"{PREFIX}{sources_digest()}"
numba.config.CACHE_DIR = str(CACHE_DIR)  # type: ignore[attr-defined]  # (numba sets its config names at import)


LOCK_FILE = ".lock"
_unlocked_save = caching.IndexDataCacheFile.save
_unlocked_load = caching.IndexDataCacheFile.load


@contextmanager
def _holding(cache_path: str, kind: int) -> Iterator[None]:
    """``kind`` (fcntl.LOCK_EX or LOCK_SH) on the lock file of ``cache_path``, where one can be made: a directory no
    process can write to gets no new entries either, so nothing races there."""
    try:
        os.makedirs(cache_path, exist_ok=True)
        lock = open(os.path.join(cache_path, LOCK_FILE), "ab")
    except OSError:
        yield
        return
    with lock:
        fcntl.flock(lock, kind)  # (released when the file closes)
        yield


def _save(self: Any, key: Any, data: Any) -> None:
    with _holding(self._cache_path, fcntl.LOCK_EX):
        _unlocked_save(self, key, data)


def _load(self: Any, key: Any) -> Any:
    with _holding(self._cache_path, fcntl.LOCK_SH):
        return _unlocked_load(self, key)


def locked_cache() -> None:
    """Every numba cache this process reads or writes, through the lock (idempotent)."""
    caching.IndexDataCacheFile.save = _save  # type: ignore[method-assign]
    caching.IndexDataCacheFile.load = _load  # type: ignore[method-assign]


locked_cache()
