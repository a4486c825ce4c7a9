"""Contact-consistent feedforward of a floating-base legged robot.

Whole-body inverse dynamics (pinocchio RNEA) of the free-flyer model, with:

- the base state from the stance feet (:mod:`legid_ros.core.contact.base_state`, the one
  shared with the identification): each stance sole is at rest on the ground, so the base
  orientation is the one that puts the first stance sole flat (or the IMU's, when given), and
  the base twist and acceleration solve ``J_c v = 0`` and ``J_c a + Jdot_c v = 0`` for the
  desired joint velocities and accelerations (least squares over the stance feet);
- the contact wrenches measured (foot F/T or sole sensors, ground-on-foot wrench at a foot
  frame) or distributed by the contact QP (:mod:`legid_ros.core.feedforward.contact_qp`) so
  that the base rows of ``M a + h = S^T tau + sum J_i^T w_i`` hold;
- swing legs by their own dynamics (they carry no contact; RNEA gives their torques);
- reflected rotor inertia and friction per joint as in the fixed-base path
  (:class:`legid_ros.core.feedforward.model.FeedforwardModel`).

``tau = (M a + h)_joints - sum_i J_i,joints^T w_i + J_rotor qdd_d + tau_f(qd_d)`` [N.m].

The identified parameters enter by writing the model's inertials from a standard parameter
vector (:func:`legid_ros.core.inertial.set_parameters`). To run inside
:class:`legid_ros.core.feedforward.PdFeedforwardController`, set the contact state with
:meth:`FloatingFeedforward.set_contacts` before each cycle; ``torque_unchecked`` then has the
fixed-base model's signature.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Sequence, Tuple

import numpy as np
import pinocchio as pin

from legid_ros.core.contact.base_state import StanceBase
from legid_ros.core.errors import BadInputError
from legid_ros.core.feedforward.contact_qp import ContactQp, SoleContact, build_contact_qp
from legid_ros.core.feedforward.model import FeedforwardModel, FrictionLike
from legid_ros.core.robot import Robot

LOCAL = pin.ReferenceFrame.LOCAL


@dataclass
class FloatingTerms:
    """One evaluation of the floating-base feedforward.

    Attributes:
        tau: Joint feedforward torque [N.m], (n,).
        wrenches: Ground-on-foot wrench per stance foot, at the sole frame ``[f, n]`` (QP) or
            at the measuring frame (measured) [N, N.m].
        base_velocity: Base twist (LOCAL, linear then angular) [m/s, rad/s], (6,).
        base_acceleration: Base spatial acceleration (LOCAL) [m/s^2, rad/s^2], (6,).
        measured: Whether the wrenches were measured (else from the QP).
        base_residual: Largest |base-row residual| of the wrenches used [N or N.m].
    """

    tau: np.ndarray
    wrenches: Dict[str, np.ndarray]
    base_velocity: np.ndarray
    base_acceleration: np.ndarray
    measured: bool
    base_residual: float


def sole_contacts(robot: Robot, mu: float = 0.6, cop_margin_m: float = 0.005
                  ) -> Dict[str, SoleContact]:
    """Contact models of the robot's feet that have a sole size (description YAML).

    Raises:
        BadInputError: the robot has no foot with a sole.
    """
    out = {name: SoleContact(name, float(f.sole_size[0]) / 2, float(f.sole_size[1]) / 2, mu,
                             cop_margin_m)
           for name, f in robot.feet.items() if f.sole_size is not None}
    if not out:
        raise BadInputError(f'robot {robot.name!r} has no foot with a sole size')
    return out


class FloatingFeedforward(FeedforwardModel):
    """Contact-consistent inverse dynamics of a floating-base robot (see the module docstring).

    Args:
        robot: Floating-base robot with feet (``load_robot(name, floating_base=True)``).
        pi: Standard inertial parameters (10 per moving body, the trunk first); default URDF.
        rotor_inertia: Joint-side rotor inertia per joint [kg.m^2]; default 0.
        friction: Friction model on joint velocities; default none.
        mu: Foot/ground friction coefficient of the contact QP [-].
        cop_margin_m: Centre-of-pressure margin to the sole edge in the QP [m].
        stance: Initial stance feet (default: every foot with a sole).
    """

    def __init__(self, robot: Robot, pi: Optional[np.ndarray] = None,
                 rotor_inertia: Optional[np.ndarray] = None,
                 friction: Optional[FrictionLike] = None, mu: float = 0.6,
                 cop_margin_m: float = 0.005, stance: Optional[Sequence[str]] = None):
        if not robot.floating:
            raise BadInputError('FloatingFeedforward needs a floating-base robot')
        super().__init__(robot, pi, rotor_inertia, friction)
        self.contacts = sole_contacts(robot, mu, cop_margin_m)
        self._sole_id = {f: self.model.getFrameId(robot.feet[f].sole_frame)
                         for f in self.contacts}
        self._frame_cache: Dict[str, int] = {}
        self._qps: Dict[Tuple[str, ...], ContactQp] = {}
        self.stance: Tuple[str, ...] = ()
        self.measured: Optional[Dict[str, Tuple[int, np.ndarray]]] = None
        self.base_quat: Optional[np.ndarray] = None
        self.last: Optional[FloatingTerms] = None
        self._stance_base = StanceBase(robot, self.model)
        self.set_contacts(stance if stance is not None else tuple(self.contacts))

    # ---------------------------------------------------------------- contact state
    def contact_qp(self, stance: Sequence[str]) -> ContactQp:
        """The contact QP of a stance set (built on first use, then reused)."""
        key = tuple(stance)
        qp = self._qps.get(key)
        if qp is None:
            qp = self._qps[key] = build_contact_qp([self.contacts[f] for f in key])
        return qp

    def _frame(self, name: str) -> int:
        fid = self._frame_cache.get(name)
        if fid is None:
            if not self.model.existFrame(name):
                raise BadInputError(f'frame {name!r} not in the model')
            fid = self._frame_cache[name] = self.model.getFrameId(name)
        return fid

    def set_contacts(self, stance: Sequence[str],
                     wrenches: Optional[Dict[str, np.ndarray]] = None,
                     frames: Optional[Dict[str, str]] = None,
                     base_quat: Optional[np.ndarray] = None) -> None:
        """Contact state used by the next evaluations.

        Args:
            stance: Feet on the ground (at least one; their soles are at rest).
            wrenches: Measured ground-on-foot wrench ``[f, n]`` [N, N.m] per foot, at the
                frame ``frames[foot]``; ``None``:
                distribute by the contact QP. Feet not in ``stance`` may be given (ignored).
            frames: Frame of each measured wrench (default: the foot's ``wrench_frame``, where
                the buffer gives it: ``ft_frame``, else the foot link).
            base_quat: Base orientation in the world from the IMU, ``[x, y, z, w]``; ``None``:
                the first stance sole is flat.

        Raises:
            BadInputError: unknown or no stance feet, malformed wrenches or quaternion.
        """
        stance = tuple(stance)
        bad = [f for f in stance if f not in self.contacts]
        if not stance or bad:
            raise BadInputError(f'stance feet {list(stance)} must be a non-empty subset of '
                                f'{list(self.contacts)}')
        meas = None
        if wrenches is not None:
            meas = {}
            for f in stance:
                if f not in wrenches:
                    raise BadInputError(f'no measured wrench for stance foot {f!r}')
                w = np.asarray(wrenches[f], float).ravel()
                if w.shape != (6,) or not np.all(np.isfinite(w)):
                    raise BadInputError(f'wrench of foot {f!r} must be 6 finite values')
                foot = self.robot.feet[f]
                name = (frames or {}).get(f) or foot.wrench_frame
                meas[f] = (self._frame(name), w)
        quat = None
        if base_quat is not None:
            quat = np.asarray(base_quat, float).ravel()
            nq = np.linalg.norm(quat) if quat.shape == (4,) else 0.0
            if not (np.isfinite(nq) and nq > 0.5):
                raise BadInputError(f'base quaternion must be 4 finite values, got {base_quat}')
            quat = quat / nq
        if wrenches is None:
            self.contact_qp(stance)
        self.stance, self.measured, self.base_quat = stance, meas, quat

    # ---------------------------------------------------------------- evaluation
    def evaluate(self, q: np.ndarray, qd_d: np.ndarray, qdd_d: np.ndarray) -> FloatingTerms:
        """Feedforward with its contact wrenches and base state (inputs already checked).

        The base state is the stance contacts' (:class:`legid_ros.core.contact.StanceBase`):
        orientation from the IMU when given, else the first stance sole flat; twist and
        acceleration keep every stance sole at rest (least squares over the stance feet; a
        consistent reference satisfies them all exactly).

        Args:
            q: Joint positions [rad] (measured or desired). qd_d: desired joint velocities
                [rad/s]. qdd_d: desired joint accelerations [rad/s^2].

        Raises:
            InfeasibleProblemError, SolverError: from the contact QP.
        """
        model, data = self.model, self.data
        base = self._stance_base
        if self.base_quat is None:
            rot = base.base_rotation(q, self.stance, 'sole')
        else:
            rot = base.base_rotation(q, self.stance, 'imu', self.base_quat)
        full, v, a = self._q, self._v, self._a
        full[:], v[:], a[:] = base.solve(q, qd_d, qdd_d, self.stance, rot)
        pin.computeJointJacobians(model, data, full)
        jacs = [pin.getFrameJacobian(model, data, self._sole_id[f], LOCAL) for f in self.stance]
        tau_full = pin.rnea(model, data, full, v, a)
        if self.measured is None:
            sol = self.contact_qp(self.stance).solve([j[:, :6] for j in jacs], tau_full[:6])
            wrenches = dict(zip(self.stance, sol.wrenches))
            contact = jacs[0].T @ sol.wrenches[0]
            for j, w in zip(jacs[1:], sol.wrenches[1:]):
                contact += j.T @ w
            resid = sol.base_residual
        else:
            wrenches, contact = {}, np.zeros(model.nv)
            for f in self.stance:
                fid, w = self.measured[f]
                contact += pin.getFrameJacobian(model, data, fid, LOCAL).T @ w
                wrenches[f] = w
            resid = float(np.abs(tau_full[:6] - contact[:6]).max())
        tau = tau_full[6:] - contact[6:] + self.rotor_inertia * qdd_d
        if self.friction is not None:
            tau += self.friction(qd_d)
        return FloatingTerms(tau, wrenches, v[:6].copy(), a[:6].copy(),
                             self.measured is not None, resid)

    def torque_unchecked(self, q: np.ndarray, qd_d: np.ndarray, qdd_d: np.ndarray
                         ) -> np.ndarray:
        """Joint feedforward torque [N.m] under the current contact state (inputs checked)."""
        self.last = self.evaluate(q, qd_d, qdd_d)
        return self.last.tau

    def torque(self, q, qd_d, qdd_d) -> np.ndarray:
        """Joint feedforward torque [N.m] (inputs checked; see :meth:`set_contacts`)."""
        return self.torque_unchecked(*self._load(q, qd_d, qdd_d))

    def terms(self, q, qd_d, qdd_d):
        """Not split into parts for a floating base: use :meth:`evaluate`."""
        raise BadInputError('FloatingFeedforward has no fixed-base term split; use evaluate()')


def floating_from_identification(robot: Robot, result, **kwargs) -> FloatingFeedforward:
    """Floating-base feedforward from an identification result (``pi`` and, if present,
    ``reflected_inertia`` and ``friction``)."""
    rotor = getattr(result, 'reflected_inertia', None)
    return FloatingFeedforward(robot, pi=np.asarray(result.pi, float),
                               rotor_inertia=None if rotor is None else np.asarray(rotor, float),
                               friction=getattr(result, 'friction', None), **kwargs)
