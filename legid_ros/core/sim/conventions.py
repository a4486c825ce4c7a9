"""Sensor readouts in other conventions than ours: the recordings a setup we did not write
would give (another IMU topic, an IMU mounted rotated with a yawed reference, foot forces
in world or foot-link axes under other topic and frame names, forces of the foot on the
ground).

:func:`read_out` turns a simulated run's readout (:class:`Recording`, in the internal
convention) into the one such a setup records, from the simulator's *true* state (base pose,
joint positions), and gives the description keys that setup's recording has; writing it
with :func:`legid_ros.bag.recording_io.write_bag` and a robot of those keys makes its bag.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin
from scipy.spatial.transform import Rotation

from legid_ros.core.recording import Recording


@dataclass(frozen=True)
class Readout:
    """A setup's conventions.

    Attributes:
        imu_topic: IMU topic.
        imu_frame_id: Header frame id of the IMU (default: the description's IMU frame).
        imu_rpy: Sensor axes in the IMU frame (mounting rotation) [rad].
        imu_heading_rad: Yaw of the IMU's reference in the world [rad].
        force_topic: Foot force topic with ``{foot}`` (its name) or ``{index}`` (its place
            in the description) (default: the description's).
        force_expressed_in: 'sensor', 'foot' or 'world' axes of the foot forces.
        force_frame_id: Header frame id of the foot forces (default: as the description's
            ``frame_id`` default for ``force_expressed_in``).
        force_gain: Factor on every force: -1 records the force the foot exerts on the
            ground; another value a sensor in other units (or a heavier robot).
    """

    imu_topic: str = '/imu'
    imu_frame_id: Optional[str] = None
    imu_rpy: tuple = (0.0, 0.0, 0.0)
    imu_heading_rad: float = 0.0
    force_topic: Optional[str] = None
    force_expressed_in: str = 'sensor'
    force_frame_id: Optional[str] = None
    force_gain: float = 1.0

    def description(self, robot) -> dict:
        """The robot's description with this setup's stream keys."""
        desc = copy.deepcopy(robot.description)
        imu = {'topic': self.imu_topic}
        if self.imu_frame_id:
            imu['frame_id'] = self.imu_frame_id
        if any(self.imu_rpy):
            imu['rpy'] = [float(x) for x in self.imu_rpy]
        if self.imu_heading_rad:
            imu['heading_rad'] = float(self.imu_heading_rad)
        desc['imu'] = imu
        for k, (name, f) in enumerate(desc['feet'].items()):
            if self.force_topic:
                f['wrench_topic'] = self.force_topic.format(foot=name, index=k)
            if self.force_expressed_in != 'sensor':
                f['expressed_in'] = self.force_expressed_in
            if self.force_frame_id:
                f['frame_id'] = self.force_frame_id.format(foot=name)
        return desc


#: Setups in conventions other than the project's (tests): forces in world or foot axes, an
#: IMU on another topic mounted rotated (rpy [rad]) with a heading [rad], and both.
OTHER_CONVENTIONS = {
    'world': Readout(force_topic='feet/{foot}/force', force_expressed_in='world'),
    'foot': Readout(force_topic='feet/{foot}/force', force_expressed_in='foot',
                    force_frame_id='{foot}_link'),
    'imu': Readout(imu_topic='/imu/data', imu_frame_id='imu_link', imu_rpy=(0.1, -0.2, 1.5),
                   imu_heading_rad=0.7),
    'imu_world': Readout(imu_topic='/imu/data', imu_rpy=(0.1, -0.2, 1.5), imu_heading_rad=0.7,
                         force_topic='feet/{foot}/force', force_expressed_in='world'),
}


def _foot_rotations(robot, rec: Recording, foot: str) -> Tuple[np.ndarray, np.ndarray]:
    """True rotations (N, 3, 3) of the foot's F/T frame and link in the world."""
    model, data = robot.model, robot.model.createData()
    ft = robot.frame_id(robot.feet[foot].wrench_frame)
    link = robot.frame_id(robot.feet[foot].link)
    r_ft, r_link = np.zeros((rec.n, 3, 3)), np.zeros((rec.n, 3, 3))
    q = pin.neutral(model)
    for k in range(rec.n):
        q[:7] = rec.base_pose_true[k]
        q[7:] = rec.q[k]
        pin.framesForwardKinematics(model, data, q)
        r_ft[k], r_link[k] = data.oMf[ft].rotation, data.oMf[link].rotation
    return r_ft, r_link


def read_out(rec: Recording, robot, readout: Readout) -> Recording:
    """The run ``rec`` of ``robot`` as the setup ``readout`` records it (a copy).

    Needs the run's true base pose (``rec.base_pose_true``) for world or foot axes.
    """
    out = rec.slice(0, rec.n)
    r_fs = pin.rpy.rpyToMatrix(*readout.imu_rpy)  # sensor axes in the IMU frame
    if any(readout.imu_rpy) or readout.imu_heading_rad:
        r_wf = Rotation.from_quat(rec.imu_quat)
        r_ws = (Rotation.from_euler('z', -readout.imu_heading_rad) * r_wf
                * Rotation.from_matrix(r_fs))
        quat = r_ws.as_quat()
        out.imu_quat = quat * np.sign(quat[:, 3:4] + 1e-12)
        out.imu_gyro = rec.imu_gyro @ r_fs
        out.imu_acc = rec.imu_acc @ r_fs
    for foot, w in rec.foot_wrench.items():
        w = readout.force_gain * w
        if readout.force_expressed_in != 'sensor':
            r_ft, r_link = _foot_rotations(robot, rec, foot)
            rot = r_ft if readout.force_expressed_in == 'world' else \
                np.einsum('nji,njk->nik', r_link, r_ft)  # R_link^T R_ft
            w = np.hstack([np.einsum('nij,nj->ni', rot, w[:, :3]),
                           np.einsum('nij,nj->ni', rot, w[:, 3:])])
        out.foot_wrench[foot] = w
    out.fsr = {f: readout.force_gain * x for f, x in rec.fsr.items()}
    out.meta['readout'] = {k: v for k, v in readout.__dict__.items()}
    return out
