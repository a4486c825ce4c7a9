"""Per-row kinematics of the buffer: base pose, contact states and the measured ZMP.

World frame as in :mod:`legid_ros.core.recording`: flat ground at z = 0, z up, the first
support sole centre at the origin. The base orientation comes from the IMU (seed 000 notes:
taking roll/pitch from the IMU halves the ZMP error floor compared to assuming a flat sole);
its position from leg odometry: the support sole stays where it was when it became the
support foot (on the ground, z = 0). The measured ZMP is the centre of pressure of the sole
sensors ``sum f_k s_k / sum f_k`` (fsr mode) or the point on the ground where the summed foot
wrenches have no horizontal moment (wrench mode). Uses pinocchio for every placement.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError
from legid_ros.core.robot import Robot


class StreamKinematics:
    """Base pose, contacts and measured ZMP of one row of the buffer.

    Args:
        robot: Floating-base robot with feet in its description.
        force_mode: 'wrench' or 'fsr'.
        contact_force_n: Normal force above which a foot is in contact [N].
        switch_ratio: The other foot becomes the support foot when it carries this many
            times the current support foot's normal force.
    """

    def __init__(self, robot: Robot, force_mode: str, contact_force_n: float = 20.0,
                 switch_ratio: float = 1.5):
        if not robot.floating:
            raise BadInputError('StreamKinematics needs a floating-base robot')
        self.robot = robot
        self.model = robot.model
        self.data = robot.new_data()
        self.force_mode = force_mode
        self.contact_force_n = contact_force_n
        self.switch_ratio = switch_ratio
        self.feet = list(robot.feet)
        self._imu = robot.frame_id(robot.imu_frame)
        self._sole = {f: robot.frame_id(robot.feet[f].sole_frame) for f in self.feet}
        self._ft = {}
        self._sensors = {}
        for name, foot in robot.feet.items():
            if force_mode == 'wrench':
                self._ft[name] = robot.frame_id(foot.ft_frame or foot.link)
            else:
                self._sensors[name] = [robot.frame_id(s) for s in foot.sensor_frames]
        self._q = pin.neutral(self.model)
        pin.framesForwardKinematics(self.model, self.data, self._q)
        self._r_bi = self.data.oMf[self._imu].rotation.copy()
        self.reset()

    def reset(self):
        """Forget the support foot and its anchor (new segment)."""
        self.support: Optional[str] = None
        self.anchor = np.zeros(3)
        self._r_wb = np.eye(3)

    def _placement(self, frame: int) -> Tuple[np.ndarray, np.ndarray]:
        m = self.data.oMf[frame]
        return m.translation, m.rotation

    def row(self, q: np.ndarray, imu_quat: np.ndarray, forces: Dict[str, np.ndarray]):
        """Measured ZMP [m] (2,), contact flags (nf,) and base pose [x y z qx qy qz qw] (7,).

        Args:
            q: Actuated joint positions in pinocchio order [rad].
            imu_quat: IMU orientation in the world [x, y, z, w] (NaN: keep the last one).
            forces: Per foot, the wrench [N, N.m] in its F/T frame (wrench mode) or the sole
                sensor normal forces [N] (fsr mode); NaN where unknown.
        """
        self._q[7:] = q
        pin.framesForwardKinematics(self.model, self.data, self._q)
        if np.all(np.isfinite(imu_quat)) and np.linalg.norm(imu_quat) > 0.5:
            quat = pin.Quaternion(np.asarray(imu_quat, float) / np.linalg.norm(imu_quat))
            self._r_wb = quat.toRotationMatrix() @ self._r_bi.T
        r_wb = self._r_wb
        fz = {f: self._normal_force(f, forces[f], r_wb) for f in self.feet}
        contact = np.array([1.0 if fz[f] > self.contact_force_n else 0.0 for f in self.feet])
        self._update_support(fz, r_wb)
        sole_b, _ = self._placement(self._sole[self.support])
        p_wb = self.anchor - r_wb @ sole_b
        zmp = self._zmp(forces, fz, p_wb, r_wb)
        quat = pin.Quaternion(r_wb).coeffs()
        return zmp, contact, np.concatenate([p_wb, quat])

    def _normal_force(self, foot: str, f: np.ndarray, r_wb: np.ndarray) -> float:
        if not np.all(np.isfinite(f)):
            return float('nan')
        if self.force_mode == 'fsr':
            return float(np.sum(f))
        _, rot = self._placement(self._ft[foot])
        return float((r_wb @ rot @ f[:3])[2])

    def _update_support(self, fz: Dict[str, float], r_wb: np.ndarray):
        known = {f: v for f, v in fz.items() if np.isfinite(v)}
        if not known:
            if self.support is None:
                self.support = self.feet[0]
            return
        best = max(known, key=known.get)
        if self.support is None:
            self.support = best
            self.anchor = np.zeros(3)
            return
        current = known.get(self.support, 0.0)
        if best != self.support and known[best] > self.switch_ratio * max(current, 1e-9) \
                and known[best] > self.contact_force_n:
            old_b, _ = self._placement(self._sole[self.support])
            new_b, _ = self._placement(self._sole[best])
            p_wb = self.anchor - r_wb @ old_b
            anchor = p_wb + r_wb @ new_b
            anchor[2] = 0.0
            self.support = best
            self.anchor = anchor

    def _zmp(self, forces, fz, p_wb, r_wb) -> np.ndarray:
        num = np.zeros(2)
        den = 0.0
        for foot in self.feet:
            f = forces[foot]
            if not np.all(np.isfinite(f)) or not fz[foot] > 1e-3 * self.contact_force_n:
                continue
            if self.force_mode == 'fsr':
                for fk, frame in zip(f, self._sensors[foot]):
                    s_b, _ = self._placement(frame)
                    num += fk * (p_wb + r_wb @ s_b)[:2]
                den += float(np.sum(f))
            else:
                o_b, rot = self._placement(self._ft[foot])
                o = p_wb + r_wb @ o_b
                r_wf = r_wb @ rot
                force, moment = r_wf @ f[:3], r_wf @ f[3:]
                px = o[0] - (moment[1] + o[2] * force[0]) / force[2]
                py = o[1] + (moment[0] - o[2] * force[1]) / force[2]
                num += force[2] * np.array([px, py])
                den += force[2]
        if den < self.contact_force_n:
            return np.full(2, np.nan)
        return num / den
