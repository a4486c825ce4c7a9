"""Joint reference of the standing biped: stand, shift the weight, lift a foot, single support.

The motion the floating-base feedforward is checked on (:mod:`legid_ros.core.sim.
biped_closed_loop`): both feet on the ground, the COM moves towards the left foot, then over
the right foot; the left foot lifts to the start posture of the ZMP-identification excitation
of Wu & Gao 2021, and that excitation follows (the synthetic planner,
:mod:`legid_ros.core.synthetic.motion`, with its ZMP guard). Everything is planned on the
model given (the **CAD** model, as a real robot's controller would): whole-body IK at knots,
one clamped cubic spline per move (each move starts and ends at rest), sampled at the control
rate. The right sole is the world frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np
import pinocchio as pin
from scipy.interpolate import CubicSpline

from legid_ros.core.errors import BadInputError, SolverError
from legid_ros.core.robot import Robot
from legid_ros.core.synthetic.motion import BipedIK, Target, guard_zmp, plan_knots

#: The left sole's place while standing, and the lifted start of the excitation [m].
LEFT_STAND = np.array([0.02, 0.13, 0.0])
LEFT_LIFTED = np.array([0.02, 0.13, 0.05])  # = the planner's first target
TRUNK_Z = 0.50  # [m] trunk height of the planner's first target


@dataclass
class BipedMotion:
    """A sampled joint reference with its contact schedule.

    Attributes:
        t: Times [s], (N,).
        q, qd, qdd: Joint positions [rad], velocities [rad/s], accelerations [rad/s^2],
            (N, n), pinocchio joint order.
        single_support_s: Time the left foot starts to lift [s]; from then on only the right
            foot is in stance.
        phases: (name, start [s], end [s]) of each move.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    single_support_s: float
    phases: List[Tuple[str, float, float]]

    def stance(self, t: float) -> Tuple[str, ...]:
        """Feet in stance at time ``t`` [s]."""
        return ('right',) if t >= self.single_support_s else ('left', 'right')

    def sample(self, t) -> tuple:
        """``(q, qd, qdd)`` at time ``t`` [s]: linear between samples, held at the ends."""
        dt = self.t[1] - self.t[0]
        s = min(max(float(t) / dt, 0.0), len(self.t) - 1.0)
        k = min(int(s), len(self.t) - 2)
        w = s - k
        return tuple((1.0 - w) * a[k] + w * a[k + 1] for a in (self.q, self.qd, self.qdd))


def _move(ik: BipedIK, q0: np.ndarray, start: Target, end: Target, duration_s: float,
          dt: float, knots: int = 6) -> Tuple[np.ndarray, tuple]:
    """IK at ``knots`` cosine-blended targets and a clamped spline; returns (last q, samples)."""
    qs, q = [q0[7:]], q0
    for k in range(1, knots + 1):
        s = 0.5 * (1 - np.cos(np.pi * k / knots))
        q, ok = ik.solve(q, start.blend(end, s))
        if not ok:
            raise SolverError('whole-body IK failed on the standing motion', 'no convergence')
        qs.append(q[7:])
    spl = CubicSpline(np.linspace(0.0, duration_s, knots + 1), np.array(qs), bc_type='clamped')
    t = np.arange(int(round(duration_s / dt))) * dt
    return q, (spl(t), spl(t, 1), spl(t, 2))


def plan_biped_motion(robot: Robot, single_s: float = 20.0, dt: float = 1e-3, seed: int = 0,
                      stand_s: float = 1.0, shift_s: Tuple[float, float] = (1.5, 2.5),
                      lift_s: float = 1.5, margin_m: float = 0.03,
                      model: Optional[pin.Model] = None) -> BipedMotion:
    """Plan stand - shift left - shift right - lift - single-support excitation.

    Args:
        robot: The biped (floating base, feet ``left`` and ``right``).
        single_s: Length of the single-support excitation [s].
        dt: Sample period [s] (the control period).
        seed: Seed of the excitation's random targets.
        stand_s: Still standing at the start [s].
        shift_s: Durations of the shift towards the left foot and then over the right [s].
        lift_s: Duration of the left foot's lift [s].
        margin_m: ZMP margin of the excitation to the right sole's edge [m].
        model: Model whose inertials the plan uses (default the robot's CAD model).

    Raises:
        BadInputError: not a biped with left and right feet.
        SolverError: the IK or the ZMP guard failed.
    """
    if not robot.floating or not {'left', 'right'} <= set(robot.feet):
        raise BadInputError('the standing motion needs a floating biped with left/right feet')
    model = model if model is not None else robot.model
    ik = BipedIK(robot, model)
    stand = Target(LEFT_STAND, 0.0, LEFT_STAND[:2] / 2, TRUNK_Z, 0.0)
    q, ok = ik.solve(ik.initial(), stand)
    if not ok:
        raise SolverError('whole-body IK failed at the standing posture', 'no convergence')
    left = Target(LEFT_STAND, 0.0, np.array([LEFT_STAND[0] / 2, 0.8 * LEFT_STAND[1]]),
                  TRUNK_Z, 0.0)
    right = Target(LEFT_STAND, 0.0, np.zeros(2), TRUNK_Z, 0.0)
    lifted = Target(LEFT_LIFTED, 0.0, np.zeros(2), TRUNK_Z, 0.0)
    n_stand = int(round(stand_s / dt))
    pieces = [(np.tile(q[7:], (n_stand, 1)), np.zeros((n_stand, q.size - 7)),
               np.zeros((n_stand, q.size - 7)))]
    phases, t0 = [('stand', 0.0, stand_s)], stand_s
    for name, a, b, dur in (('shift_left', stand, left, shift_s[0]),
                            ('shift_right', left, right, shift_s[1]),
                            ('lift', right, lifted, lift_s)):
        q, samples = _move(ik, q, a, b, dur, dt)
        pieces.append(samples)
        phases.append((name, t0, t0 + dur))
        t0 += dur
    single_start = t0 - lift_s
    rng = np.random.default_rng(seed)
    sole_half = np.asarray(robot.feet['right'].sole_size) / 2
    traj = plan_knots(robot, model, single_s, rng, margin_m, 1.0, (2.0, 4.0), 4)
    guard_zmp(traj, model, robot.frame_id(robot.feet['right'].sole_frame), single_s,
              sole_half - margin_m)
    t = np.arange(int(round(single_s / dt)) + 1) * dt
    pieces.append(traj.evaluate(np.minimum(t, traj.knot_times[-1])))
    phases.append(('single_support', t0, t0 + single_s))
    q_all, qd_all, qdd_all = (np.vstack([p[i] for p in pieces]) for i in range(3))
    return BipedMotion(t=np.arange(len(q_all)) * dt, q=q_all, qd=qd_all, qdd=qdd_all,
                       single_support_s=single_start, phases=phases)
