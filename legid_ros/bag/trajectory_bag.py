"""A joint trajectory as a rosbag2: one ``trajectory_msgs/JointTrajectory`` on ``legid/reference``.

What the controller node subscribes to (:mod:`legid_ros.ros.controller_node`: a whole
trajectory in one message, times from its start; the header stamp 0 means "from reception"), so
``ros2 bag play`` of this bag hands the node the whole designed motion at once. Written with
``rosbags`` (no ROS needed), atomically: into a temporary directory renamed at the end.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Sequence, Union

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from legid_ros.core.errors import BadInputError

REFERENCE_TOPIC = '/legid/reference'
_TS = get_typestore(Stores.ROS2_HUMBLE)
_TYPE = 'trajectory_msgs/msg/JointTrajectory'


def trajectory_message(joint_names: Sequence[str], t: np.ndarray, q: np.ndarray,
                       qd: np.ndarray, qdd: np.ndarray):
    """The rosbags ``JointTrajectory`` (times [s] from the start; rad, rad/s, rad/s^2)."""
    msgs = _TS.types
    header = msgs['std_msgs/msg/Header'](stamp=msgs['builtin_interfaces/msg/Time'](
        sec=0, nanosec=0), frame_id='')
    pts = []
    for k in range(len(t)):
        sec = int(np.floor(t[k]))
        dur = msgs['builtin_interfaces/msg/Duration'](
            sec=sec, nanosec=int(round((t[k] - sec) * 1e9)) % 1_000_000_000)
        pts.append(msgs['trajectory_msgs/msg/JointTrajectoryPoint'](
            positions=np.asarray(q[k], float), velocities=np.asarray(qd[k], float),
            accelerations=np.asarray(qdd[k], float), effort=np.zeros(0),
            time_from_start=dur))
    return msgs[_TYPE](header=header, joint_names=list(joint_names), points=pts)


def write_reference_bag(path: Union[str, Path], joint_names: Sequence[str], t: np.ndarray,
                        q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                        overwrite: bool = False) -> Path:
    """Write the reference bag directory ``path`` (mcap) and return it.

    Raises:
        BadInputError: Shapes that do not match, non-finite values, or ``path`` exists.
    """
    path = Path(path)
    q, qd, qdd = (np.atleast_2d(np.asarray(x, float)) for x in (q, qd, qdd))
    n, nj = q.shape
    if len(joint_names) != nj or qd.shape != q.shape or qdd.shape != q.shape or len(t) != n:
        raise BadInputError(f'reference shapes do not match: {len(joint_names)} joints, '
                            f'q {q.shape}, qd {qd.shape}, qdd {qdd.shape}, t {len(t)}')
    if not (np.isfinite(q).all() and np.isfinite(qd).all() and np.isfinite(qdd).all()):
        raise BadInputError('the reference has non-finite values')
    if path.exists():
        if not overwrite:
            raise BadInputError(f'{path} exists; choose another path or overwrite')
        shutil.rmtree(path)
    parent = path.with_name(f'.{path.name}.tmp')  # the bag's own name inside, renamed at the end
    if parent.exists():
        shutil.rmtree(parent)
    msg = trajectory_message(joint_names, t, q, qd, qdd)
    try:
        parent.mkdir(parents=True)
        with Writer(parent / path.name, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
            conn = writer.add_connection(REFERENCE_TOPIC, _TYPE, typestore=_TS)
            writer.write(conn, 1, bytes(_TS.serialize_cdr(msg, _TYPE)))
        (parent / path.name).rename(path)
    except (OSError, ValueError) as exc:
        raise BadInputError(f'cannot write bag {path}: {exc}') from exc
    finally:
        shutil.rmtree(parent, ignore_errors=True)
    return path
