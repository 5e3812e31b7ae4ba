"""Writing files and directories so that readers see the old content or the new, never a part.

Every state the product keeps (plan files, verdicts, the ledger, the simulator's state, the analysis'
outputs, a staged plan directory) is written through here: a process killed mid-write leaves the
previous version, never a valid-looking half.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def atomic_write(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never a part.

    Temp file in the same directory, fsync, ``os.replace``, fsync of the directory.
    """
    with _named(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)
    return path


@contextmanager
def atomic_directory(target: Path) -> Iterator[Path]:
    """A temporary directory beside ``target``; when the block ends without an error it becomes ``target``.

    ``target`` must not exist, or be an empty directory (callers check what they may replace). One
    ``sync`` for what may be thousands of files, then one rename publishes the complete directory; on
    an error the temporary directory is removed and ``target`` is untouched.
    """
    with _named(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700; the published directory is readable like any other
        os.sync()
        if target.is_dir():
            target.rmdir()
        os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@contextmanager
def _named(target: Path) -> Iterator[None]:
    """An OSError from making the temporary beside ``target`` names ``target``, the path the operator chose, not the
    temporary's name they never gave."""
    try:
        yield
    except OSError as exc:
        if exc.filename == str(target):
            raise
        raise OSError(exc.errno, exc.strerror, str(target)) from exc


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on a directory; the rename is still atomic
    finally:
        os.close(fd)
