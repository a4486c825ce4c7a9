"""Files of the estimator node: its state (``.npz``, no pickle) and the identified URDF + YAML.

The state is :meth:`OnlineEstimator.state_dict` plus the node's own entries: samples folded,
robot name and the last published (consistent) parameter set with its names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np

from legid_ros.core.errors import LegidError
from legid_ros.core.identification.online import OnlineEstimator
from legid_ros.core.robot import Robot
from legid_ros.core.urdf_io import write_parameter_yaml, write_urdf

#: (standard parameters, their names) of a published solution.
Published = Tuple[np.ndarray, List[str]]


def save_state(path: Path, est: OnlineEstimator, robot: str, folded: int,
               published: Optional[Published]) -> Path:
    """Write the state to ``path`` atomically (a temporary file, then a rename)."""
    state = est.state_dict()
    state['node_folded'] = np.array(folded)
    state['node_robot'] = np.array(robot)
    if published is not None:
        state['node_pi'] = published[0]
        state['node_names'] = np.array(published[1])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + '.tmp.npz')
    np.savez(tmp, **state)
    tmp.replace(path)
    return path


def load_state(path: Path, est: OnlineEstimator, robot: str
               ) -> Tuple[int, Optional[Published]]:
    """Restore ``est`` from ``path``; returns (samples folded, last published set or None).

    Raises:
        LegidError: The file is for another robot or method (from ``load_state_dict``).
        ValueError, KeyError, OSError: Unreadable or incomplete file.
    """
    with np.load(path, allow_pickle=False) as z:
        state = {k: z[k] for k in z.files}
    if str(state.get('node_robot', robot)) != robot:
        raise LegidError(f'state file is for robot {state["node_robot"]}')
    est.load_state_dict(state)
    published = None
    if 'node_pi' in state:
        published = (np.array(state['node_pi'], float), [str(x) for x in state['node_names']])
    return int(state.get('node_folded', 0)), published


def write_identified(out: Path, robot: Robot, pi: np.ndarray, extra: Dict) -> List[Path]:
    """``<robot>_identified.urdf`` and ``.yaml`` in ``out`` (created); returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    return [write_urdf(robot.urdf_path, robot.model, pi, out / f'{robot.name}_identified.urdf'),
            write_parameter_yaml(robot.model, pi, out / f'{robot.name}_identified.yaml', extra)]
