"""Files of the estimator node: its state (``.npz``, no pickle) and the identified URDF + YAML.

The state is :meth:`OnlineEstimator.state_dict` plus the node's own entries: samples folded,
robot name and the last published (consistent) parameter set with its names. Every file is
written atomically with fsync (:mod:`legid_ros.core.atomic_files`): a power loss leaves the old
file or the new one. A state file that cannot be restored is moved aside by the node.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np

from legid_ros.core.atomic_files import atomic_path, inside, safe_stem
from legid_ros.core.errors import BadInputError, LegidError
from legid_ros.core.identification.online import OnlineEstimator
from legid_ros.core.robot import Robot
from legid_ros.core.urdf_io import identified_suffix, write_parameter_yaml, write_urdf

#: (standard parameters, their names) of a published solution.
Published = Tuple[np.ndarray, List[str]]


def save_state(path: Path, est: OnlineEstimator, robot: str, folded: int,
               published: Optional[Published]) -> Path:
    """Write the state to ``path`` atomically (temporary file, fsync, rename, directory fsync)."""
    state = est.state_dict()
    state['node_folded'] = np.array(folded)
    state['node_robot'] = np.array(robot)
    if published is not None:
        state['node_pi'] = published[0]
        state['node_names'] = np.array(published[1])
    with atomic_path(path) as tmp:
        np.savez(tmp, **state)
    return path


def load_state(path: Path, est: OnlineEstimator, robot: str
               ) -> Tuple[int, Optional[Published]]:
    """Restore ``est`` from ``path``; returns (samples folded, last published set or None).

    Raises:
        LegidError: The file is for another robot or method (from ``load_state_dict``), or
            its published set is not finite or does not match its names.
        ValueError, KeyError, OSError, EOFError: Unreadable or incomplete file (a truncated
            zip raises ``zipfile.BadZipFile``, a ValueError... or EOFError).
    """
    with np.load(path, allow_pickle=False) as z:
        state = {k: z[k] for k in z.files}
    if str(state.get('node_robot', robot)) != robot:
        raise LegidError(f'state file is for robot {state["node_robot"]}')
    bad = sorted(k for k, v in state.items() if v.dtype.kind in 'fc' and not np.isfinite(v).all())
    if bad:
        raise BadInputError(f'state file holds NaN or inf in {", ".join(bad)}')
    est.load_state_dict(state)
    published = None
    if 'node_pi' in state:
        pi = np.array(state['node_pi'], float).reshape(-1)
        names = [str(x) for x in np.atleast_1d(state['node_names'])]
        if len(names) != pi.size or not np.isfinite(pi).all():
            raise BadInputError(f'saved parameters: {pi.size} values (finite: '
                                f'{bool(np.isfinite(pi).all())}) for {len(names)} names')
        published = (pi, names)
    return int(state.get('node_folded', 0)), published


def identified_paths(out: Path, robot_name: str, suffix: str = '.urdf') -> Tuple[Path, Path]:
    """(model, YAML) paths of ``robot_name``'s identified model in ``out``: the name is reduced
    to a safe stem, so nothing is written outside ``out`` (``../../x`` gives ``x``); ``suffix``
    '.xml' for a robot described by an MJCF."""
    stem = safe_stem(robot_name)
    return (inside(out, f'{stem}_identified{suffix}'), inside(out, f'{stem}_identified.yaml'))


def write_identified(out: Path, robot: Robot, pi: np.ndarray, extra: Dict) -> List[Path]:
    """``<robot>_identified.urdf`` (``.xml`` from an MJCF) and ``.yaml`` in ``out`` (created),
    each written atomically; returns their paths."""
    if not np.isfinite(pi).all():
        raise BadInputError('identified parameters are not finite: nothing written')
    urdf, yaml_path = identified_paths(out, robot.name, identified_suffix(robot.urdf_path))
    with atomic_path(urdf) as tmp:
        write_urdf(robot.urdf_path, robot.model, pi, tmp)
    with atomic_path(yaml_path) as tmp:
        write_parameter_yaml(robot.model, pi, tmp, extra)
    return [urdf, yaml_path]
