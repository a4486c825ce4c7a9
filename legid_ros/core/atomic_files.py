"""Files that survive a power loss or a kill: atomic writes, damaged files moved aside, safe names.

An atomic write goes to a temporary file in the destination's directory, is flushed to the
disk (``fsync``), renamed over the destination (``os.replace``: readers see the old file or
the new one, never a part) and the directory entry is flushed too. A file found damaged is
renamed ``<name>.corrupt-<UTC time>`` (kept for inspection, never deleted). Names that come
from input (a robot name in a description YAML) are reduced to a safe file-name stem, and
:func:`inside` refuses any path that would leave its output directory.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import time
from pathlib import Path
from typing import Iterator, Optional, Union

from legid_ros.core.errors import BadInputError

PathLike = Union[str, os.PathLike]
#: Characters kept in a file-name stem taken from input; the others become '_'.
_UNSAFE = re.compile(r'[^A-Za-z0-9._-]+')
#: Longest file-name stem made by :func:`safe_stem` [characters].
MAX_STEM = 100


def fsync_dir(directory: PathLike) -> None:
    """Flush a directory's entries to the disk (no-op where directories cannot be opened)."""
    try:
        fd = os.open(os.fspath(directory), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def fsync_file(path: PathLike) -> None:
    """Flush a written file's data to the disk."""
    fd = os.open(os.fspath(path), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temp_path(path: PathLike) -> Path:
    """A unique temporary path next to ``path`` with the same suffix (``.x.tmp-<pid>-<r>.npz``).

    Same directory: the final rename never crosses file systems. Same suffix: writers that
    append a suffix (``numpy.savez``) write exactly there.
    """
    path = Path(path)
    return path.with_name(f'.{path.stem}.tmp-{os.getpid()}-{secrets.token_hex(4)}{path.suffix}')


@contextlib.contextmanager
def atomic_path(path: PathLike) -> Iterator[Path]:
    """Context manager: write to the yielded temporary path; on success it becomes ``path``.

    The parent directory is created. On an exception the temporary file is removed and
    ``path`` is untouched.

    Example:
        >>> with atomic_path('out/state.npz') as tmp:   # doctest: +SKIP
        ...     numpy.savez(tmp, a=1)
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(path)
    try:
        yield tmp
        fsync_file(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def write_bytes(path: PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (fsync + rename + directory fsync)."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_text(path: PathLike, text: str, encoding: str = 'utf-8') -> Path:
    """Write ``text`` to ``path`` atomically (fsync + rename + directory fsync)."""
    return write_bytes(path, text.encode(encoding))


def remove_stale_temps(path: PathLike) -> int:
    """Delete temporary files left next to ``path`` by writers killed mid-write; returns
    how many were removed."""
    path = Path(path)
    removed = 0
    if not path.parent.is_dir():
        return 0
    for tmp in path.parent.glob(f'.{glob_escape(path.stem)}.tmp-*{glob_escape(path.suffix)}'):
        with contextlib.suppress(OSError):
            tmp.unlink()
            removed += 1
    return removed


def glob_escape(text: str) -> str:
    """``text`` with glob wildcards escaped."""
    return re.sub(r'([*?\[])', r'[\1]', text)


def quarantine(path: PathLike, tag: str = 'corrupt', now: Optional[float] = None) -> Path:
    """Rename a damaged file to ``<name>.<tag>-<UTC time>`` (unique); returns the new path."""
    path = Path(path)
    stamp = time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(time.time() if now is None else now))
    target = path.with_name(f'{path.name}.{tag}-{stamp}')
    k = 1
    while target.exists():
        target = path.with_name(f'{path.name}.{tag}-{stamp}-{k}')
        k += 1
    os.replace(path, target)
    fsync_dir(path.parent)
    return target


def safe_stem(name: str, default: str = 'robot') -> str:
    """A file-name stem made from ``name`` (input): only letters, digits, '.', '_' and '-',
    no leading dot, at most :data:`MAX_STEM` characters; ``default`` if nothing is left.

    ``'../../escaped'`` -> ``'escaped'``; ``'my robot'`` -> ``'my_robot'``.
    """
    stem = _UNSAFE.sub('_', str(name)).strip('._-')
    stem = re.sub(r'\.{2,}', '_', stem)[:MAX_STEM]
    return stem or default


def inside(directory: PathLike, path: PathLike) -> Path:
    """``path`` (relative to ``directory`` if relative), refused unless it lies inside it.

    Raises:
        BadInputError: The resolved path leaves ``directory``.
    """
    base = Path(directory).resolve()
    full = (base / path).resolve()
    if full != base and base not in full.parents:
        raise BadInputError(f'{path} would be written outside {directory}')
    return full
