"""Message helpers of the ik node: foot-target requests in, joint trajectories out."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Transform, Twist
from trajectory_msgs.msg import (JointTrajectory, JointTrajectoryPoint, MultiDOFJointTrajectory,
                                 MultiDOFJointTrajectoryPoint)

from legid_ros.core.errors import BadInputError


def duration_to_sec(d: Duration) -> float:
    """Duration message -> seconds."""
    return float(d.sec) + 1e-9 * float(d.nanosec)


def sec_to_duration(t: float) -> Duration:
    """Seconds (>= 0) -> Duration message."""
    sec = int(np.floor(t))
    nsec = int(round((t - sec) * 1e9))
    if nsec >= 1_000_000_000:
        sec, nsec = sec + 1, nsec - 1_000_000_000
    return Duration(sec=sec, nanosec=nsec)


def foot_targets_from_msg(msg: MultiDOFJointTrajectory):
    """Unpack a foot-target request.

    Returns:
        (legs, times [s] (N,), positions {leg: (N, 3)} [m], velocities {leg: (N, 3)} [m/s] or
        None when some point carries no velocities).

    Raises:
        BadInputError: No legs or points, duplicate legs, wrong transform counts, times not
            increasing, non-finite numbers.
    """
    legs = list(msg.joint_names)
    if not legs or not msg.points:
        raise BadInputError('foot-target request has no legs or no points')
    if len(set(legs)) != len(legs):
        raise BadInputError(f'duplicate legs in request: {legs}')
    n, m = len(msg.points), len(legs)
    pos = np.empty((n, m, 3))
    vel = np.empty((n, m, 3))
    has_vel = True
    times = np.empty(n)
    for k, pt in enumerate(msg.points):
        if len(pt.transforms) != m:
            raise BadInputError(f'point {k} has {len(pt.transforms)} transforms for {m} legs')
        times[k] = duration_to_sec(pt.time_from_start)
        for j, tf in enumerate(pt.transforms):
            pos[k, j] = (tf.translation.x, tf.translation.y, tf.translation.z)
        if len(pt.velocities) == m:
            for j, tw in enumerate(pt.velocities):
                vel[k, j] = (tw.linear.x, tw.linear.y, tw.linear.z)
        else:
            has_vel = False
    if n > 1 and np.any(np.diff(times) <= 0):
        raise BadInputError('time_from_start must increase from point to point')
    if not np.all(np.isfinite(pos)) or (has_vel and not np.all(np.isfinite(vel))):
        k = int(np.flatnonzero(~np.isfinite(pos).all(axis=(1, 2)))[0]) if not np.all(
            np.isfinite(pos)) else 0
        raise BadInputError(f'non-finite foot target at t = {times[k]:.4f} s')
    positions = {leg: pos[:, j] for j, leg in enumerate(legs)}
    velocities = {leg: vel[:, j] for j, leg in enumerate(legs)} if has_vel else None
    return legs, times, positions, velocities


def foot_targets_msg(legs: Sequence[str], times: np.ndarray, positions: Dict[str, np.ndarray],
                     velocities: Optional[Dict[str, np.ndarray]] = None,
                     frame_id: str = '') -> MultiDOFJointTrajectory:
    """Build a foot-target request (one 'joint' per leg, translation = foot in the hip frame)."""
    msg = MultiDOFJointTrajectory()
    msg.header.frame_id = frame_id
    msg.joint_names = list(legs)
    for k, t in enumerate(times):
        pt = MultiDOFJointTrajectoryPoint()
        for leg in legs:
            tf = Transform()
            tf.translation.x, tf.translation.y, tf.translation.z = (
                float(v) for v in positions[leg][k])
            tf.rotation.w = 1.0
            pt.transforms.append(tf)
            if velocities is not None:
                tw = Twist()
                tw.linear.x, tw.linear.y, tw.linear.z = (float(v) for v in velocities[leg][k])
                pt.velocities.append(tw)
        pt.time_from_start = sec_to_duration(float(t))
        msg.points.append(pt)
    return msg


def joint_trajectory_msg(joint_names: List[str], times: np.ndarray, q: np.ndarray,
                         qd: Optional[np.ndarray] = None, stamp=None,
                         frame_id: str = '') -> JointTrajectory:
    """JointTrajectory from positions (N, J) [rad] and optional velocities (N, J) [rad/s]."""
    msg = JointTrajectory()
    if stamp is not None:
        msg.header.stamp = stamp
    msg.header.frame_id = frame_id
    msg.joint_names = list(joint_names)
    for k, t in enumerate(times):
        pt = JointTrajectoryPoint()
        pt.positions = [float(v) for v in q[k]]
        if qd is not None:
            pt.velocities = [float(v) for v in qd[k]]
        pt.time_from_start = sec_to_duration(float(t))
        msg.points.append(pt)
    return msg


def joint_trajectory_arrays(msg: JointTrajectory) -> Tuple[List[str], np.ndarray, np.ndarray]:
    """(joint names, times [s] (N,), positions (N, J) [rad]) of a JointTrajectory."""
    times = np.array([duration_to_sec(p.time_from_start) for p in msg.points])
    q = np.array([list(p.positions) for p in msg.points], float)
    return list(msg.joint_names), times, q
