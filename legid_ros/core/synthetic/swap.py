"""Support-swap excitation: single support on the right, a double-support transfer, then
single support on the left, so each foot is weighed by its ankle F/T while it swings.

The right-support part is the ZMP-identification excitation of Wu & Gao 2021
(:func:`legid_ros.core.synthetic.motion.plan_knots`); then the left foot is put down beside
the right one (:data:`LEFT_STAND`, flat, heading 0), the COM moves across in double support,
the right foot lifts and the same random excitation runs on the left sole. Each phase is one
clamped cubic spline of the joint angles (each starts and ends at rest). The world is the
right sole frame throughout. In double support the measured total ground wrench is split
between the feet by where its ZMP lies along the segment between the sole centres (each
foot's centre of pressure keeps the total's offset from that segment), which reproduces the
total wrench exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Tuple

import numpy as np
import pinocchio as pin
from scipy.interpolate import CubicSpline

from legid_ros.core.conventions.convert import matrix_quat
from legid_ros.core.errors import SolverError
from legid_ros.core.robot import Robot
from legid_ros.core.synthetic.dynamics import (ContactDynamics, contact_dynamics,
                                               zmp_from_wrench)
from legid_ros.core.synthetic.motion import (BipedIK, JointTrajectory, Target, guard_zmp,
                                             plan_knots)

#: Left sole centre while both feet stand, in the right sole frame [m] (heading 0, flat).
LEFT_STAND = np.array([0.02, 0.13, 0.0])
#: Durations of the transfer moves: put the left foot down, shift the weight, lift the
#: right foot [s].
TRANSFER_S = (1.5, 3.0, 1.5)
#: Height of a lifted foot at the ends of the transfer [m].
LIFT_M = 0.05
#: IK knots of each transfer move (dense in double support, where both feet are held only at
#: the knots) [-].
TRANSFER_KNOTS = (6, 30, 6)


@dataclass
class Phase:
    """One clamped spline of the run.

    Attributes:
        name: 'right', 'down', 'shift', 'lift' or 'left'.
        t0: Start time [s]; the spline's own time starts at 0.
        spline: Joint angles (clamped cubic spline of the phase's own time).
        stance: Feet in stance.
        frame: Sole whose frame the base is placed from ('right' or 'left').
    """

    name: str
    t0: float
    spline: CubicSpline
    stance: Tuple[str, ...]
    frame: str

    @property
    def t1(self) -> float:
        """End time [s]."""
        return self.t0 + float(self.spline.x[-1])


def _move(ik: BipedIK, q0: np.ndarray, start: Target, end: Target, duration_s: float,
          knots: int) -> Tuple[CubicSpline, np.ndarray]:
    """Clamped spline of a move from ``start`` to ``end`` (IK at cosine-spaced knots)."""
    qs, q = [q0[7:]], q0
    for k in range(1, knots + 1):
        s = 0.5 * (1 - np.cos(np.pi * k / knots))
        q, ok = ik.solve(q, start.blend(end, s))
        if not ok:
            raise SolverError('whole-body IK failed in the support swap', 'no convergence')
        qs.append(q[7:])
    t = np.linspace(0.0, duration_s, knots + 1)
    return CubicSpline(t, np.array(qs), bc_type='clamped'), q


def _ik_state(ik: BipedIK, q_joints: np.ndarray, tgt: Target) -> Tuple[np.ndarray, Target]:
    """Full configuration (support sole at the origin) of joint angles, re-solved on ``tgt``."""
    q, ok = ik.solve(np.concatenate([[0, 0, 0, 0, 0, 0, 1.0], q_joints]), tgt)
    if not ok:
        raise SolverError('whole-body IK failed in the support swap', 'no convergence')
    return q, tgt


def plan_swap(robot: Robot, model: pin.Model, duration_s: float, rng: np.random.Generator,
              zmp_margin: float, speed_scale: float, segment_s: Tuple[float, float],
              knots_per_segment: int) -> List[Phase]:
    """Phases of the swap protocol covering at least ``duration_s`` [s].

    The two single-support parts share what the transfer leaves, about half each (the
    planner covers a second more than it is asked for).
    """
    single = max(0.5 * (duration_s - sum(TRANSFER_S) / speed_scale), 1.0)
    sole_r = robot.frame_id(robot.feet['right'].sole_frame)
    sole_l = robot.frame_id(robot.feet['left'].sole_frame)
    limit = np.asarray(robot.feet['right'].sole_size) / 2 - zmp_margin - 0.001
    traj = _trimmed(plan_knots(robot, model, single, rng, zmp_margin, speed_scale, segment_s,
                               knots_per_segment), single)
    guard_zmp(traj, model, sole_r, traj.knot_times[-1], limit)
    phases = [Phase('right', 0.0, traj.spline(), ('right',), 'right')]
    ik_r = BipedIK(robot, model, 'right')
    last = traj.targets[-1]
    q, _ = _ik_state(ik_r, traj.knots_q[-1], last)
    stand = Target(left_pos=LEFT_STAND.copy(), left_yaw=0.0, com_xy=np.zeros(2), trunk_z=0.50,
                   trunk_yaw=0.0)
    spl, q = _move(ik_r, q, last, stand, TRANSFER_S[0] / speed_scale, TRANSFER_KNOTS[0])
    phases.append(Phase('down', phases[-1].t1, spl, ('right',), 'right'))
    over_left = Target(left_pos=LEFT_STAND.copy(), left_yaw=0.0, com_xy=LEFT_STAND[:2].copy(),
                       trunk_z=0.50, trunk_yaw=0.0)
    spl, q = _move(ik_r, q, stand, over_left, TRANSFER_S[1] / speed_scale, TRANSFER_KNOTS[1])
    phases.append(Phase('shift', phases[-1].t1, spl, ('left', 'right'), 'right'))
    # from here on the left sole is the IK's frame: the right foot is at -LEFT_STAND in it
    ik_l = BipedIK(robot, model, 'left')
    standing = Target(left_pos=-LEFT_STAND, left_yaw=0.0, com_xy=np.zeros(2), trunk_z=0.50,
                      trunk_yaw=0.0)
    lifted = Target(left_pos=-LEFT_STAND + [0.0, 0.0, LIFT_M], left_yaw=0.0,
                    com_xy=np.zeros(2), trunk_z=0.50, trunk_yaw=0.0)
    q, _ = _ik_state(ik_l, q[7:], standing)
    spl, q = _move(ik_l, q, standing, lifted, TRANSFER_S[2] / speed_scale, TRANSFER_KNOTS[2])
    phases.append(Phase('lift', phases[-1].t1, spl, ('left',), 'left'))
    rest = max(duration_s - phases[-1].t1 - 1.0, 1.0)
    traj_l = plan_knots(robot, model, rest, rng, zmp_margin, speed_scale, segment_s,
                        knots_per_segment, support='left', start=(q, lifted))
    guard_zmp(traj_l, model, sole_l, traj_l.knot_times[-1], limit)
    phases.append(Phase('left', phases[-1].t1, traj_l.spline(), ('left',), 'left'))
    return phases


def _trimmed(traj: JointTrajectory, need_s: float) -> JointTrajectory:
    """The prefix of whole moves whose length is closest to ``need_s`` [s] (at least one)."""
    ends = np.cumsum(traj.seg_durations)
    keep = int(np.argmin(np.abs(ends - need_s))) + 1
    k = keep * traj.knots_per_segment + 1
    return JointTrajectory(traj.knots_q[:k], traj.seg_durations[:keep].copy(),
                           traj.knots_per_segment, traj.targets[:k])


def evaluate(phases: List[Phase], t: np.ndarray):
    """Joint ``(q, qd, qdd)`` at times ``t`` [s] and the phase index of each sample."""
    starts = np.array([p.t0 for p in phases])
    which = np.clip(np.searchsorted(starts, t, side='right') - 1, 0, len(phases) - 1)
    nj = phases[0].spline.c.shape[-1]
    out = [np.zeros((len(t), nj)) for _ in range(3)]
    for i, ph in enumerate(phases):
        sel = which == i
        if sel.any():
            tau = np.clip(t[sel] - ph.t0, 0.0, ph.t1 - ph.t0)
            for d in range(3):
                out[d][sel] = ph.spline(tau, d)
    return out[0], out[1], out[2], which


@dataclass
class SwapDynamics:
    """Exact dynamics of the swap run in the world (the right sole frame).

    Attributes:
        dyn: Base motion, IMU, motor torques; ``dyn.wrench`` is the total ground wrench about
            the world origin in world axes and ``dyn.zmp`` its ZMP [N, N.m, m].
        sole_wrench: Per foot, ground-on-foot wrench at its sole origin in sole axes, (N, 6).
        stance: Per foot, whether it is in stance, (N,) bool.
    """

    dyn: ContactDynamics
    sole_wrench: Dict[str, np.ndarray]
    stance: Dict[str, np.ndarray]


def swap_dynamics(robot: Robot, model: pin.Model, phases: List[Phase], t: np.ndarray,
                  imu_id: int) -> SwapDynamics:
    """Dynamics of every sample of the swap protocol with the parameters of ``model``."""
    qj, qdj, qddj, which = evaluate(phases, t)
    n = len(t)
    data = model.createData()
    ids = {f: robot.frame_id(robot.feet[f].sole_frame) for f in ('right', 'left')}
    parts = []
    m_left = None
    for i, ph in enumerate(phases):
        sel = np.flatnonzero(which == i)
        if sel.size == 0:
            continue
        d = contact_dynamics(model, data, qj[sel], qdj[sel], qddj[sel], ids[ph.frame], imu_id)
        if ph.frame == 'left':
            if m_left is None:
                m_left = _left_sole_in_world(model, data, phases, ids)
            d = _moved(d, m_left)
        parts.append((sel, ph, d))
    fields = ('q', 'v', 'a', 'wrench', 'tau_motor', 'tau_full', 'zmp', 'imu_quat', 'imu_gyro',
              'imu_acc')
    first = parts[0][2]
    full = {k: np.zeros((n,) + getattr(first, k).shape[1:]) for k in fields}
    sole_w = {f: np.zeros((n, 6)) for f in ids}
    stance = {f: np.zeros(n, bool) for f in ids}
    for sel, ph, d in parts:
        for k in fields:
            full[k][sel] = getattr(d, k)
        for f in ph.stance:
            stance[f][sel] = True
        if len(ph.stance) == 1:
            sole_w[ph.stance[0]][sel] = _at_sole(model, data, d.q, d.wrench, ids[ph.stance[0]])
        else:
            _split(model, data, robot, d, ids, full, sel, sole_w)
    # every part's wrench: about the world origin in world axes
    full['zmp'] = zmp_from_wrench(full['wrench'])
    return SwapDynamics(ContactDynamics(**full), sole_w, stance)


def _left_sole_in_world(model, data, phases, ids) -> pin.SE3:
    """Pose of the left sole when the right foot lifts (base placed from the right sole)."""
    ph = next(p for p in phases if p.name == 'shift')
    qj = ph.spline(ph.t1 - ph.t0)
    q = np.concatenate([[0, 0, 0, 0, 0, 0, 1.0], qj])
    pin.framesForwardKinematics(model, data, q)
    m_r = data.oMf[ids['right']]
    return m_r.inverse() * data.oMf[ids['left']]


def _moved(d: ContactDynamics, m: pin.SE3) -> ContactDynamics:
    """Dynamics computed with the left sole at the origin, moved to the world by ``m``."""
    q = d.q.copy()
    quat = d.imu_quat.copy()
    for k in range(len(q)):
        base = m * pin.XYZQUATToSE3(q[k, :7])
        q[k, :7] = pin.SE3ToXYZQUAT(base)
        quat[k] = matrix_quat(m.rotation @ pin.Quaternion(*np.roll(d.imu_quat[k], 1))
                              .matrix())
    # wrench about the left sole origin in its axes -> about the world origin in world axes
    wrench = d.wrench @ m.toDualActionMatrix().T
    return ContactDynamics(q=q, v=d.v, a=d.a, wrench=wrench, tau_motor=d.tau_motor,
                           tau_full=d.tau_full, zmp=zmp_from_wrench(wrench), imu_quat=quat,
                           imu_gyro=d.imu_gyro, imu_acc=d.imu_acc)


def _at_sole(model, data, q: np.ndarray, wrench_world: np.ndarray, sole_id: int) -> np.ndarray:
    """World wrenches about the origin -> at the sole origin in sole axes, per sample."""
    out = np.empty_like(wrench_world)
    for k in range(len(q)):
        pin.framesForwardKinematics(model, data, q[k])
        out[k] = data.oMf[sole_id].inverse().toDualActionMatrix() @ wrench_world[k]
    return out


def _split(model, data, robot, d: ContactDynamics, ids, full, sel, sole_w) -> None:
    """Double support: split the total wrench between the feet; motor torques of both."""
    loc = pin.ReferenceFrame.LOCAL
    for j, k in enumerate(sel):
        q = d.q[j]
        pin.framesForwardKinematics(model, data, q)
        m = {f: data.oMf[ids[f]].copy() for f in ids}
        w = d.wrench[j]
        f, n = w[:3], w[3:]
        p = np.array([-n[1] / f[2], n[0] / f[2], 0.0])
        c_r, c_l = m['right'].translation * [1, 1, 0], m['left'].translation * [1, 1, 0]
        seg = c_l - c_r
        s = float(np.clip((p - c_r) @ seg / (seg @ seg), 0.0, 1.0))
        share = {'right': 1.0 - s, 'left': s}
        off = p - (share['right'] * c_r + share['left'] * c_l)
        cop = {'right': c_r + off, 'left': c_l + off}
        tz = n[2] - sum(share[ft] * np.cross(cop[ft], f)[2] for ft in ids)
        tau_m = d.tau_full[j, 6:].copy()
        for ft in ids:
            fi = share[ft] * f
            wi = np.concatenate([fi, np.cross(cop[ft], fi) + [0.0, 0.0, share[ft] * tz]])
            local = m[ft].inverse().toDualActionMatrix() @ wi
            sole_w[ft][k] = local
            jac = pin.computeFrameJacobian(model, data, q, ids[ft], loc)
            tau_m -= jac[:, 6:].T @ local
        full['tau_motor'][k] = tau_m
