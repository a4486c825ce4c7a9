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
``anchor.y``, ``anchor.yaw``).

The contact flags are the contact rule's (:mod:`legid_ros.core.contact.rule`: thresholds
relative to the robot's weight, with hysteresis; its state carried from chunk to chunk, so
chunked rows give the batch rule's states) on the world-vertical foot forces, and the measured
ZMP is :func:`legid_ros.core.contact.cop.measured_cop` of the feet in contact (sole sensors,
6-axis wrenches, point feet: the same computation as ``prepare``'s). The support foot is the
most loaded foot in contact (changing when another carries ``switch_ratio`` times more): before
the first foot in contact there is no support foot (support, base pose and ZMP are NaN).
Uses pinocchio for every placement.
"""

from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np
import pinocchio as pin
from scipy.spatial.transform import Rotation

from legid_ros.core.contact import ContactRule, ContactThresholds, cop_frames, measured_cop
from legid_ros.core.contact.rule import node_thresholds
from legid_ros.core.conventions.convert import quat_matrices, rotate_wrench, wrench_rotation
from legid_ros.core.errors import BadInputError
from legid_ros.core.robot import Robot


class StreamKinematics:
    """Base pose, contacts and measured ZMP of one row of the buffer.

    Args:
        robot: Floating-base robot with feet in its description.
        force_mode: 'wrench' or 'fsr'.
        thresholds: The contact rule's thresholds (default: relative to the robot's weight).
        contact_force_n: If given (and no ``thresholds``), an absolute touch-down force [N];
            the lift-off force is the same fraction of it as the default fractions' ratio.
        switch_ratio: Another foot in contact becomes the support foot when it carries this
            many times the current support foot's normal force.
        expressed_in: Per foot, the axes its incoming wrenches are in: 'sensor' (its F/T
            frame, the default and the internal convention), 'foot' (its link) or 'world'
            (the force world, turned with the IMU's orientation); :meth:`rows` brings them to
            the F/T frame's axes with :mod:`legid_ros.core.conventions.convert` (the offline
            conversion's functions), e.g. ``{f: foot.expressed_in for f, foot in
            robot.feet.items()}``; None: every foot in its F/T frame.
    """

    def __init__(self, robot: Robot, force_mode: str,
                 thresholds: Optional[ContactThresholds] = None,
                 contact_force_n: Optional[float] = None, switch_ratio: float = 1.5,
                 expressed_in: Optional[Dict[str, str]] = None):
        if not robot.floating:
            raise BadInputError('StreamKinematics needs a floating-base robot')
        self.robot = robot
        self.model = robot.model
        self.data = robot.new_data()
        self.force_mode = force_mode
        if thresholds is None:
            thresholds = node_thresholds(robot, contact_force_n=contact_force_n or 0.0)[0]
        self.thresholds = thresholds
        self.switch_ratio = switch_ratio
        self.feet = list(robot.feet)
        self.rule = ContactRule(thresholds, len(self.feet))
        self._joints: List[int] = []
        self._sole = [self._frame(robot.feet[f].sole_frame) for f in self.feet]
        if force_mode == 'wrench':
            self._ft = [self._frame(robot.feet[f].wrench_frame)
                        for f in self.feet]
        axes = expressed_in or {}
        bad = {f: a for f, a in axes.items() if a not in ('sensor', 'foot', 'world')
               or f not in robot.feet}
        if bad:
            raise BadInputError(f'expressed_in {bad}: need feet of {robot.name} and sensor, '
                                'foot or world')
        # feet whose wrenches are converted: (index, axes, link frame for foot axes)
        self._convert = [(k, axes[f], self._frame(robot.feet[f].link) if axes[f] == 'foot'
                          else None) for k, f in enumerate(self.feet)
                         if force_mode == 'wrench' and axes.get(f, 'sensor') != 'sensor']
        # the frames the measured CoP places the forces at (sensors, F/T frames, contact points)
        ids = self._cop_ids = cop_frames(robot, self.feet, force_mode)
        self._cop = {i: self._frame(self.model.frames[i].name) for f in ids for i in ids[f]}
        # the F/T frames (wrench mode): the CoP needs their rotation too, and rows() has them
        self._cop_ft = {ids[f][0]: k for k, f in enumerate(self.feet)} \
            if force_mode == 'wrench' else {}
        # a rolling point foot's contact frame: its rotation places the contact too
        self._cop_rolling = {ids[f][1] for f in self.feet if len(ids[f]) > 1
                             and robot.feet[f].radius > 0}
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
        self.rule.reset()

    def _joint_placements(self, q: np.ndarray):
        """Per row, rotation (n, J, 3, 3) and translation (n, J, 3) of the needed joints."""
        n = len(q)
        out = np.empty((n, len(self._joints), 4, 4))
        model, data, q_full = self.model, self.data, self._q
        # references into data.oMi: forwardKinematics updates them in place (one homogeneous
        # matrix per joint and row instead of a rotation and a translation: half the cost)
        placed = [data.oMi[jid] for jid in self._joints]
        for k in range(n):
            q_full[7:] = q[k]
            pin.forwardKinematics(model, data, q_full)
            for j, m in enumerate(placed):
                out[k, j] = m.homogeneous
        return out[:, :, :3, :3], out[:, :, :3, 3]

    @staticmethod
    def _apply(frame, rot, pos):
        """Frame position (n, 3) and rotation (n, 3, 3) in the base frame."""
        slot, place = frame
        r = rot[:, slot]
        return pos[:, slot] + r @ place.translation, r @ place.rotation

    def rows(self, q: np.ndarray, imu_quat: np.ndarray, forces: Dict[str, np.ndarray]):
        """Measured ZMP [m] (n, 2), contact flags (n, nf), base pose [x y z qx qy qz qw] (n, 7).

        Also sets :attr:`extra` (n, 5): support foot index, support-sole anchor x, y in the
        world [m], the normal force of the feet in contact [N] (NaN without any force reading)
        and the support sole's heading in the world [rad].

        Args:
            q: Actuated joint positions in pinocchio order, (n, nj) [rad].
            imu_quat: IMU orientation [x, y, z, w] in any frame with z up, (n, 4) (NaN: keep
                the last); only its roll and pitch are used.
            forces: Per foot, (n, 6) wrenches [N, N.m] in the axes of ``expressed_in`` (F/T
                frame by default), moments about the F/T frame's origin (wrench mode; a point
                foot's torques are ignored) or (n, k) force-sensor normal forces [N] (fsr
                mode); NaN where unknown. Wrenches in other axes are replaced (in this dict)
                by their F/T-frame-axes values.
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
            self._to_ft_axes(force, forces, ft, rot, pos, imu_quat)
            # vertical force: independent of any yaw, so the tilt alone gives it
            fz = np.column_stack([np.einsum('nj,nj->n', (tilt @ r)[:, 2], f[:, :3])
                                  for (_, r), f in zip(ft, force)])
        contact = self.rule.update(fz)
        extra = np.empty((n, 5))
        anchor = self._supports(fz, contact, sole_b, r_sb, extra)
        extra[:, 1:3] = anchor[:, :2]
        known = np.isfinite(extra[:, 0])  # rows after the first foot in contact
        sup = np.where(known, extra[:, 0], 0).astype(int)
        rows = np.arange(n)
        r_wb = _rot_z(extra[:, 4]) @ np.stack(r_sb)[sup, rows]
        p_wb = anchor - np.einsum('nij,nj->ni', r_wb, np.stack(sole_b)[sup, rows])
        p_wb[~known] = np.nan
        placements = {}
        for fid, (slot, place) in self._cop.items():
            m = np.zeros((n, 3, 4))
            if fid in self._cop_ft:  # position and rotation
                p_b, r_b = ft[self._cop_ft[fid]]
                m[:, :, :3] = r_wb @ r_b
            else:  # a position only (sensors, contact points), a rolling foot's rotation too
                p_b = pos[:, slot] + rot[:, slot] @ place.translation
                if fid in self._cop_rolling:
                    m[:, :, :3] = r_wb @ rot[:, slot] @ place.rotation
            m[:, :, 3] = p_wb + np.einsum('nij,nj->ni', r_wb, p_b)
            placements[fid] = m
        zmp, fz_on = measured_cop(self.robot, self.force_mode, dict(zip(self.feet, force)),
                                  contact, placements, frames=self._cop_ids)
        fz_on[~np.isfinite(fz).any(axis=1)] = np.nan
        extra[:, 3] = fz_on
        self.extra = extra
        quat = Rotation.from_matrix(r_wb).as_quat()
        quat[~known] = np.nan
        return zmp, contact.astype(float), np.hstack([p_wb, quat])

    def _to_ft_axes(self, force: list, forces: dict, ft: list, rot: np.ndarray,
                    pos: np.ndarray, imu_quat: np.ndarray) -> None:
        """Wrenches in foot or world axes -> F/T frame axes (in ``force`` and ``forces``)."""
        if not self._convert:
            return
        r_wf = quat_matrices(imu_quat) if any(a == 'world' for _, a, _ in self._convert) \
            else None
        for k, axes, link in self._convert:
            r_bl = self._apply(link, rot, pos)[1] if link is not None else None
            w = rotate_wrench(force[k], wrench_rotation(axes, ft[k][1], r_bl, self._r_bi, r_wf))
            force[k] = forces[self.feet[k]] = w

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

    def _supports(self, fz: np.ndarray, contact: np.ndarray, sole_b: List[np.ndarray],
                  r_sb: List[np.ndarray], extra: np.ndarray) -> np.ndarray:
        """Support foot per row (``extra[:, 0]``, NaN before any foot in contact), heading
        (``extra[:, 4]``) and sole anchor in the world (returned, (n, 3) [m]).

        The support changes to the most loaded foot in contact (``contact`` (n, nf)) once its
        normal force (``fz`` (n, nf) [N]) exceeds ``switch_ratio`` times the current one's; at
        a change, anchor and heading of the new sole keep the base pose continuous. Rows
        between two changes are filled with numpy (one Python step per change, not per row).
        """
        n = len(fz)
        known = np.isfinite(fz)
        f = np.where(known & contact, fz, -np.inf)
        best = np.argmax(f, axis=1)
        f_best = f[np.arange(n), best]
        any_known = contact.any(axis=1)
        anchor = np.empty((n, 3))
        k = 0
        while k < n:
            if self.support is None:
                hits = np.flatnonzero(any_known[k:])
            else:
                s = self.support
                current = np.maximum(np.where(known[k:, s], f[k:, s], 0.0), 1e-9)
                hits = np.flatnonzero((best[k:] != s) & any_known[k:]
                                      & (f_best[k:] > self.switch_ratio * current))
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
