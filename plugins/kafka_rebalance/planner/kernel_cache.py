"""Where numba keeps the planner's compiled kernels: one directory per version of every kernel source together.

numba checks a cached kernel against its own source file only. A kernel that calls another file's kernel (the count
goal's search calls the vetoes in ``goals/compiled_vetoes.py``) would otherwise load stale machine code after that
other file changed, and plan with the old rule. Keyed by a hash of every planner source that uses numba, any change to
any of them starts a fresh cache. Imported by ``kafka_rebalance.planner`` before any kernel is defined (numba reads the
directory when a kernel is decorated).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import numba

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
