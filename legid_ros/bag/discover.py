"""Where a rosbag2 lives: the bag a user's path names, and the names of a bag to write.

A path may name a bag directory (with its ``metadata.yaml``), a storage file inside one, a
bare storage file (an ``.mcap`` copied alone, or a file of another MCAP tool), a directory a
recorder left without ``metadata.yaml`` (it writes that file only when it stops), or the path
given to :func:`legid_ros.bag.recording_io.write_bag` (``run.mcap`` names the bag directory
``run/``, like ``ros2 bag record -o run``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import List, Optional, Tuple, Union

import yaml

from legid_ros.core.errors import BadInputError

#: Storage of each storage-file suffix.
STORAGE_SUFFIX = {'.mcap': 'mcap', '.db3': 'sqlite3'}
_MCAP_MAGIC = b'\x89MCAP0\r\n'


@dataclass(frozen=True)
class BagSource:
    """The files of one bag.

    Attributes:
        path: The bag's name: its directory, or the bare storage file.
        storage: 'mcap' or 'sqlite3'.
        files: Storage files, in recording order (may be empty if ``metadata.yaml`` is
            unreadable and the directory holds none).
        reader_path: What ``rosbags``' Reader opens (the directory with ``metadata.yaml``, or
            one storage file); None when it cannot (several files without ``metadata.yaml``).
    """

    path: Path
    storage: str
    files: List[Path] = field(default_factory=list)
    reader_path: Optional[Path] = None


def _natural(path: Path):
    """Sort key putting ``run_2.mcap`` before ``run_10.mcap``."""
    return [int(t) if t.isdigit() else t for t in re.split(r'(\d+)', path.name)]


def _storage_files(directory: Path) -> List[Path]:
    """Storage files of a directory, in recording order (mcap first, then sqlite3)."""
    for suffix in STORAGE_SUFFIX:
        found = sorted((f for f in directory.glob('*' + suffix) if f.is_file()), key=_natural)
        if found:
            return found
    return []


def _from_metadata(directory: Path) -> BagSource:
    """A bag directory holding ``metadata.yaml`` (its file list, or the storage files found
    when the YAML is unreadable: ``rosbags`` then reports the error)."""
    try:
        meta = yaml.safe_load((directory / 'metadata.yaml').read_text())
        meta = meta['rosbag2_bagfile_information']
        files = [directory / PurePath(p).name for p in meta['relative_file_paths']]
        storage = str(meta['storage_identifier'])
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        files = _storage_files(directory)
        storage = STORAGE_SUFFIX.get(files[0].suffix, 'mcap') if files else 'mcap'
    return BagSource(directory, storage, files, directory)


def _is_mcap(path: Path) -> bool:
    try:
        with open(path, 'rb') as f:
            head = f.read(8)
    except OSError:
        return False
    return len(head) > 0 and _MCAP_MAGIC.startswith(head)


def locate_bag(path: Union[str, Path]) -> BagSource:
    """The bag a path names (see the module docstring for the accepted forms).

    Raises:
        BadInputError: Nothing there, or nothing that looks like a rosbag2.
    """
    p = Path(path)
    if not p.exists():
        target = p.with_suffix('') if p.suffix in STORAGE_SUFFIX else None
        if target is not None and target.is_dir():
            return locate_bag(target)
        raise BadInputError(f'bag not found: {p}')
    if p.is_file() and (p.parent / 'metadata.yaml').is_file():
        return _from_metadata(p.parent)
    if p.is_dir() and (p / 'metadata.yaml').is_file():
        return _from_metadata(p)
    if p.is_file() and (p.suffix in STORAGE_SUFFIX or _is_mcap(p)):
        storage = STORAGE_SUFFIX.get(p.suffix, 'mcap')
        return BagSource(p, storage, [p], p if p.suffix in STORAGE_SUFFIX else None)
    files = _storage_files(p) if p.is_dir() else []
    if files:
        storage = STORAGE_SUFFIX[files[0].suffix]
        return BagSource(p, storage, files, files[0] if len(files) == 1 else None)
    raise BadInputError(f'not a rosbag2 (no metadata.yaml): {p}')


def output_bag(path: Union[str, Path], storage: Optional[str] = None) -> Tuple[Path, str]:
    """(bag directory, storage) of a bag to write at ``path``.

    A path ending in ``.mcap`` or ``.db3`` names the directory without that suffix (``run.mcap``
    -> ``run/`` holding ``run/run.mcap``) and, when ``storage`` is None, the storage; any other
    path is the directory itself (storage 'mcap' by default).

    Raises:
        BadInputError: Unknown storage, or a suffix naming another storage than ``storage``.
    """
    p = Path(path)
    implied = STORAGE_SUFFIX.get(p.suffix)
    storage = storage or implied or 'mcap'
    if storage not in STORAGE_SUFFIX.values():
        raise BadInputError(f'unknown storage {storage!r}; use mcap or sqlite3')
    if implied is None:
        return p, storage
    if implied != storage:
        raise BadInputError(f'{p} ends in {p.suffix} but the storage asked is {storage}')
    if not p.stem:
        raise BadInputError(f'{p}: give the bag a name before {p.suffix}')
    return p.with_suffix(''), storage
