"""Per-row kinematics of the buffer: base pose, contact states and the measured ZMP.

World frame as in :mod:`legid_ros.core.recording`: flat ground at z = 0, z up, the first
support sole centre at the origin and its heading along x. The base roll and pitch come from
the IMU (ZMP-feedback identification, Wu & Gao 2021: taking roll/pitch from the IMU halves the
ZMP error floor compared to assuming a flat sole), i.e. only the gravity direction: the IMU's
heading (magnetometer, power-on yaw, drift) is never used. The base yaw comes from the support
foot's kinematics, exactly as the estimator's model builds the base state
(:func:`legid_ros.core.identification.rows.regressors.support_base_state`: roll and pitch of
the IMU, yaw of the support sole), turned by the heading ``psi`` of the support sole in the
world. The base position comes from leg odometry: the support sole stays where it was when it
became the support foot (on the ground, z = 0). At a support change the new sole's anchor and
heading are taken so that the base pose is continuous, so the model's support-sole frame is
the world moved by the anchor (x, y) and turned by ``psi`` (channels ``anchor.x``,
``anchor.y``, ``anchor.yaw``). The measured ZMP is the
centre of pressure of the sole sensors ``sum f_k s_k / sum f_k`` (fsr mode; the sensors at the
description's positions in the sole frame, :meth:`Robot.force_sensor_positions`) or the point on
the ground where the summed foot wrenches have no horizontal moment (wrench mode). A point foot
(``contact: point``) carries a force only: its wrench message's force (torques ignored) acts at
its contact point, the origin of its sole frame (the foot frame, or the point the description
defines), so the ZMP of point feet on flat ground is ``sum f_z p / sum f_z`` over their contact
points ``p``. A point foot measured by one normal force is described with one force sensor at
its contact point (fsr mode). Contact flags and the support foot follow from the normal forces:
before the first force sample there is no support foot (support, base pose and ZMP are NaN).
Uses pinocchio for every placement.
"""

from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np
import pinocchio as pin
from scipy.spatial.transform import Rotation

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
        self._joints: List[int] = []
        self._sole = [self._frame(robot.feet[f].sole_frame) for f in self.feet]
        self._point = [robot.feet[f].contact == 'point' for f in self.feet]
        if force_mode == 'wrench':
            self._ft = [self._frame(robot.feet[f].ft_frame or robot.feet[f].link)
                        for f in self.feet]
        else:
            # each sensor rides on its foot's sole frame, at the description's position [m]
            self._sensors = [[(slot, place * pin.SE3(np.eye(3), p))
                              for p in robot.force_sensor_positions(f)]
                             for f, (slot, place) in zip(self.feet, self._sole)]
        self._q = pin.neutral(self.model)
        pin.framesForwardKinematics(self.model, self.data, self._q)
        self._r_bi = self.data.oMf[robot.frame_id(robot.imu_frame)].rotation.copy()
        self.reset()

    def _frame(self, name: str):
        """(slot of its parent joint in ``self._joints``, placement in that joint)."""
        frame = self.model.frames[self.robot.frame_id(name)]
        if frame.parentJoint not in self._joints:
            self._joints.append(frame.parentJoint)
        return self._joints.index(frame.parentJoint), frame.placement.copy()

    def reset(self):
        """Forget the support foot and its anchor (new segment)."""
        self.support: Optional[int] = None
        self.anchor = np.zeros(3)
        self.heading = 0.0  # yaw of the support sole's frame in the world [rad]
        self._r_tilt = np.eye(3)

    def _joint_placements(self, q: np.ndarray):
        """Per row, rotation (n, J, 3, 3) and translation (n, J, 3) of the needed joints."""
        n = len(q)
        rot = np.empty((n, len(self._joints), 3, 3))
        pos = np.empty((n, len(self._joints), 3))
        for k in range(n):
            self._q[7:] = q[k]
            pin.forwardKinematics(self.model, self.data, self._q)
            for j, jid in enumerate(self._joints):
                m = self.data.oMi[jid]
                rot[k, j] = m.rotation
                pos[k, j] = m.translation
        return rot, pos

    @staticmethod
    def _apply(frame, rot, pos):
        """Frame position (n, 3) and rotation (n, 3, 3) in the base frame."""
        slot, place = frame
        r = rot[:, slot]
        return pos[:, slot] + r @ place.translation, r @ place.rotation

    def rows(self, q: np.ndarray, imu_quat: np.ndarray, forces: Dict[str, np.ndarray]):
        """Measured ZMP [m] (n, 2), contact flags (n, nf), base pose [x y z qx qy qz qw] (n, 7).

        Also sets :attr:`extra` (n, 5): support foot index, support-sole anchor x, y in the
        world [m], the total measured normal force [N] and the support sole's heading in the
        world [rad].

        Args:
            q: Actuated joint positions in pinocchio order, (n, nj) [rad].
            imu_quat: IMU orientation [x, y, z, w] in any frame with z up, (n, 4) (NaN: keep
                the last); only its roll and pitch are used.
            forces: Per foot, (n, 6) wrenches [N, N.m] in the F/T frame (wrench mode; a point
                foot's torques are ignored) or (n, k) force-sensor normal forces [N] (fsr
                mode); NaN where unknown.
        """
        n = len(q)
        rot, pos = self._joint_placements(q)
        tilt = self._tilts(imu_quat)
        sole = [self._apply(f, rot, pos) for f in self._sole]
        sole_b = [p for p, _ in sole]
        # base rotation in each foot's sole frame: IMU roll/pitch, yaw of the kinematics
        r_sb = [_rot_z(np.arctan2(r[:, 0, 1], r[:, 0, 0])) @ tilt for _, r in sole]
        force = [forces[f] for f in self.feet]
        if self.force_mode == 'fsr':
            fz = np.column_stack([f.sum(axis=1) for f in force])
        else:
            ft = [self._apply(f, rot, pos) for f in self._ft]
            # vertical force: independent of any yaw, so the tilt alone gives it
            fz = np.column_stack([np.einsum('nj,nj->n', (tilt @ r)[:, 2], f[:, :3])
                                  for (_, r), f in zip(ft, force)])
        contact = (fz > self.contact_force_n).astype(float)
        extra = np.empty((n, 5))
        anchor = self._supports(fz, sole_b, r_sb, extra)
        extra[:, 1:3] = anchor[:, :2]
        known = np.isfinite(extra[:, 0])  # rows after the first force sample
        sup = np.where(known, extra[:, 0], 0).astype(int)
        rows = np.arange(n)
        r_wb = _rot_z(extra[:, 4]) @ np.stack(r_sb)[sup, rows]
        p_wb = anchor - np.einsum('nij,nj->ni', r_wb, np.stack(sole_b)[sup, rows])
        p_wb[~known] = np.nan
        if self.force_mode == 'wrench':
            r_wf = [r_wb @ r for _, r in ft]
            f_w = [np.einsum('nij,nj->ni', r, f[:, :3]) for r, f in zip(r_wf, force)]
        with np.errstate(invalid='ignore'):
            extra[:, 3] = np.where(np.isfinite(fz), fz, 0.0).sum(axis=1)
        extra[~np.isfinite(fz).any(axis=1), 3] = np.nan
        self.extra = extra
        num = np.zeros((n, 2))
        den = np.zeros(n)
        # Every foot with a finite reading counts, loaded or not: the ZMP is the centre of the
        # total normal force. Leaving out feet below a force threshold would keep only the
        # positive noise of an unloaded foot and bias the ZMP toward it (0.17 mm lateral with
        # 1 N of F/T noise on the biped's swinging foot); zero-mean noise does not bias the sum.
        for i in range(len(self.feet)):
            use = np.isfinite(fz[:, i])
            if not use.any():
                continue
            if self.force_mode == 'fsr':
                for j, frame in enumerate(self._sensors[i]):
                    s_w = p_wb + np.einsum('nij,nj->ni', r_wb, self._apply(frame, rot, pos)[0])
                    num[use] += force[i][use, j:j + 1] * s_w[use, :2]
            elif self._point[i]:
                # a force at the contact point on the ground: f_z times the point
                o = p_wb + np.einsum('nij,nj->ni', r_wb, sole_b[i])
                num[use] += fz[use, i:i + 1] * o[use, :2]
            else:
                o = p_wb + np.einsum('nij,nj->ni', r_wb, ft[i][0])
                f = f_w[i]
                m = np.einsum('nij,nj->ni', r_wf[i], force[i][:, 3:])
                # f_z times the foot's centre of pressure, without dividing by its f_z
                nx = f[:, 2] * o[:, 0] - (m[:, 1] + o[:, 2] * f[:, 0])
                ny = f[:, 2] * o[:, 1] + (m[:, 0] - o[:, 2] * f[:, 1])
                num[use] += np.column_stack([nx, ny])[use]
            den[use] += fz[use, i]
        with np.errstate(invalid='ignore', divide='ignore'):
            zmp = num / den[:, None]
        zmp[den < self.contact_force_n] = np.nan
        quat = Rotation.from_matrix(r_wb).as_quat()
        quat[~known] = np.nan
        return zmp, contact, np.hstack([p_wb, quat])

    def row(self, q: np.ndarray, imu_quat: np.ndarray, forces: Dict[str, np.ndarray]):
        """:meth:`rows` for a single sample (1-D arrays in, 1-D arrays out)."""
        zmp, contact, base = self.rows(np.atleast_2d(q), np.atleast_2d(imu_quat),
                                       {f: np.atleast_2d(v) for f, v in forces.items()})
        return zmp[0], contact[0], base[0]

    def _tilts(self, imu_quat: np.ndarray) -> np.ndarray:
        """Base rotation in a level frame with the base's own heading, (n, 3, 3): the IMU's
        roll and pitch only (its yaw removed); rows without a valid IMU keep the last."""
        n = len(imu_quat)
        out = np.empty((n, 3, 3))
        norm = np.linalg.norm(imu_quat, axis=1)
        good = np.isfinite(imu_quat).all(axis=1) & (norm > 0.5)
        if good.any():
            r = Rotation.from_quat(imu_quat[good] / norm[good, None]).as_matrix() @ self._r_bi.T
            out[good] = _rot_z(-np.arctan2(r[:, 1, 0], r[:, 0, 0])) @ r
        if n == 0:
            return out
        src = np.where(good, np.arange(n), -1)
        np.maximum.accumulate(src, out=src)  # the last good row at or before each row
        out = np.where((src >= 0)[:, None, None], out[np.maximum(src, 0)], self._r_tilt)
        self._r_tilt = out[-1].copy()
        return out

    def _supports(self, fz: np.ndarray, sole_b: List[np.ndarray], r_sb: List[np.ndarray],
                  extra: np.ndarray) -> np.ndarray:
        """Support foot per row (``extra[:, 0]``, NaN before any force), heading
        (``extra[:, 4]``) and sole anchor in the world (returned, (n, 3) [m]).

        The support changes to the most loaded foot once its normal force (``fz`` (n, nf)
        [N]) exceeds ``switch_ratio`` times the current one's and ``contact_force_n``; at a
        change, anchor and heading of the new sole keep the base pose continuous. Rows between
        two changes are filled with numpy (one Python step per change, not per row).
        """
        n = len(fz)
        known = np.isfinite(fz)
        f = np.where(known, fz, -np.inf)
        best = np.argmax(f, axis=1)
        f_best = f[np.arange(n), best]
        any_known = known.any(axis=1)
        anchor = np.empty((n, 3))
        k = 0
        while k < n:
            if self.support is None:
                hits = np.flatnonzero(any_known[k:])
            else:
                s = self.support
                current = np.maximum(np.where(known[k:, s], f[k:, s], 0.0), 1e-9)
                hits = np.flatnonzero((best[k:] != s) & (f_best[k:] > self.switch_ratio * current)
                                      & (f_best[k:] > self.contact_force_n))
            j = n if not hits.size else k + int(hits[0])
            anchor[k:j] = self.anchor
            extra[k:j, 0] = np.nan if self.support is None else self.support
            extra[k:j, 4] = self.heading
            if j < n:
                self._change_support(int(best[j]), j, sole_b, r_sb)
                anchor[j] = self.anchor
                extra[j, 0], extra[j, 4] = self.support, self.heading
            k = j + 1
        return anchor

    def _change_support(self, new: int, k: int, sole_b: List[np.ndarray],
                        r_sb: List[np.ndarray]) -> None:
        """Make foot ``new`` the support at row ``k`` (the first one: at the world origin)."""
        if self.support is None:
            self.support, self.anchor, self.heading = new, np.zeros(3), 0.0
            return
        r_wb = _rot_z(self.heading) @ r_sb[self.support][k]
        p_wb = self.anchor - r_wb @ sole_b[self.support][k]
        anchor = p_wb + r_wb @ sole_b[new][k]
        anchor[2] = 0.0
        # r_wb = Rz(heading_new) r_sb[new]: same rotation as Rz(heading) r_sb[support]
        m = r_wb @ r_sb[new][k].T
        self.heading = float(np.arctan2(m[1, 0], m[0, 0]))
        self.support = new
        self.anchor = anchor

    @property
    def support_foot(self) -> Optional[str]:
        """Name of the current support foot."""
        return None if self.support is None else self.feet[self.support]


def _rot_z(yaw) -> np.ndarray:
    """Rotation(s) about z by ``yaw`` [rad]: (3, 3) for a scalar, (n, 3, 3) for (n,)."""
    yaw = np.asarray(yaw, float)
    c, s = np.cos(yaw), np.sin(yaw)
    out = np.zeros(yaw.shape + (3, 3))
    out[..., 0, 0] = c
    out[..., 0, 1] = -s
    out[..., 1, 0] = s
    out[..., 1, 1] = c
    out[..., 2, 2] = 1.0
    return out
