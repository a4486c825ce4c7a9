"""Where the package's data (urdf/, config/) lives, in a source tree or an install space."""

from __future__ import annotations

import os
from pathlib import Path

from legid_ros.core.errors import RobotDescriptionError

_PACKAGE = 'legid_ros'


def share_dir() -> Path:
    """Directory holding ``urdf/`` and ``config/``.

    Looked up in order: ``$LEGID_SHARE``; the source tree (editable install); a colcon or pip
    install prefix (``<prefix>/share/legid_ros``).

    Raises:
        RobotDescriptionError: when none of them exists.
    """
    env = os.environ.get('LEGID_SHARE')
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    source = here.parents[2]
    if (source / 'urdf').is_dir() and (source / 'config').is_dir():
        return source
    for parent in here.parents:
        candidate = parent / 'share' / _PACKAGE
        if (candidate / 'urdf').is_dir():
            return candidate
    raise RobotDescriptionError('cannot find the legid_ros share directory; set LEGID_SHARE')


def urdf_path(name: str) -> Path:
    """Path of ``urdf/<name>``."""
    return share_dir() / 'urdf' / name


def config_path(name: str) -> Path:
    """Path of ``config/<name>``."""
    return share_dir() / 'config' / name


def available_robots() -> list:
    """Names of the built-in robots (description YAMLs that name a URDF)."""
    out = []
    for p in sorted((share_dir() / 'config').glob('*.yaml')):
        try:
            text = p.read_text()
        except OSError:
            continue
        if '\nurdf:' in text or text.startswith('urdf:'):
            out.append(p.stem)
    return out
