"""Files a description or URDF names: ``package://`` URIs and STL meshes.

``package://<name>/<rest>`` resolves, in order, under ``<prefix>/share/<name>`` of every
prefix in ``AMENT_PREFIX_PATH``, under the directories of ``ROS_PACKAGE_PATH`` (the package
directory itself or a child named ``<name>``), and under ``cmeel.prefix/share/<name>`` of every
``site-packages`` on ``sys.path`` (where pip's ``example-robot-data`` puts its robots).
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path
from typing import Iterator, Optional, Union

import numpy as np

from legid_ros.core.errors import RobotDescriptionError

PACKAGE_SCHEME = 'package://'
FILE_SCHEME = 'file://'


def _package_roots(name: str) -> Iterator[Path]:
    for prefix in filter(None, os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep)):
        yield Path(prefix) / 'share' / name
    for root in filter(None, os.environ.get('ROS_PACKAGE_PATH', '').split(os.pathsep)):
        root = Path(root)
        yield root if root.name == name else root / name
    for entry in sys.path:
        if entry.endswith('site-packages'):
            yield Path(entry) / 'cmeel.prefix' / 'share' / name


def package_dir(name: str) -> Optional[Path]:
    """Directory of a package named in a ``package://`` URI, or None."""
    for root in _package_roots(name):
        if root.is_dir():
            return root
    return None


def resolve_uri(uri: str, base_dir: Optional[Union[str, Path]] = None) -> Path:
    """Path of a ``package://``, ``file://``, absolute or relative (to ``base_dir``) name.

    Raises:
        RobotDescriptionError: A ``package://`` URI whose package is not found.
    """
    uri = str(uri)
    if uri.startswith(FILE_SCHEME):
        return Path(uri[len(FILE_SCHEME):])
    if uri.startswith(PACKAGE_SCHEME):
        name, _, rest = uri[len(PACKAGE_SCHEME):].partition('/')
        root = package_dir(name)
        if root is None:
            raise RobotDescriptionError(f'package {name!r} of {uri} not found (searched '
                                        'AMENT_PREFIX_PATH, ROS_PACKAGE_PATH and pip\'s '
                                        'cmeel prefix)')
        return root / rest
    path = Path(uri)
    return path if path.is_absolute() or base_dir is None else Path(base_dir) / path


def stl_vertices(path: Union[str, Path]) -> np.ndarray:
    """Vertices (3 per facet) of a binary or ASCII STL file, (n, 3) [file units].

    Raises:
        RobotDescriptionError: Unreadable or malformed file.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise RobotDescriptionError(f'cannot read mesh: {exc}', str(path)) from exc
    if len(raw) >= 84:
        count = struct.unpack('<I', raw[80:84])[0]
        if len(raw) == 84 + 50 * count:
            rec = np.frombuffer(raw, dtype=np.dtype([('n', '<f4', 3), ('v', '<f4', (3, 3)),
                                                     ('a', '<u2')]), count=count, offset=84)
            return rec['v'].reshape(-1, 3).astype(float)
    words = raw.decode('ascii', 'replace').split()
    out = [words[i + 1:i + 4] for i, w in enumerate(words) if w == 'vertex']
    try:
        verts = np.array(out, float).reshape(-1, 3)
    except ValueError as exc:
        raise RobotDescriptionError('malformed STL', str(path)) from exc
    if verts.size == 0:
        raise RobotDescriptionError('STL file has no facets', str(path))
    return verts
