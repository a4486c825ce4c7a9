"""Feedforward torque ``tau_ff = (J_rotor + M(q)) qdd_d + C(q, qd_d) qd_d + G(q) + tau_f(qd_d)``.

The rigid-body terms come from pinocchio's RNEA on any standard inertial parameter set;
``J_rotor`` is the reflected rotor inertia per joint (``gear_ratio^2 * rotor_inertia`` on the
joint side [kg.m^2]); ``tau_f`` is any friction model on joint velocities.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Union

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError
from legid_ros.core.feedforward.fast_friction import compile_friction
from legid_ros.core.inertial import get_parameters, parameter_names, set_parameters
from legid_ros.core.robot import Robot

FrictionLike = Union[Callable[[np.ndarray], np.ndarray], Sequence[Callable]]


def reflected_rotor_inertia(robot: Robot) -> np.ndarray:
    """Joint-side rotor inertia ``gear_ratio^2 * rotor_inertia`` per actuated joint [kg.m^2].

    Read from the description YAML's ``joints`` section; joints without an entry get 0.
    """
    table = robot.description.get('joints') or {}
    out = []
    for name in robot.actuated_joint_names:
        entry = table.get(name) or {}
        ratio = float(entry.get('gear_ratio', 1.0))
        out.append(ratio ** 2 * float(entry.get('rotor_inertia_kg_m2', 0.0)))
    return np.array(out)


class _PerJointFriction:
    """Adapter: a list of per-joint friction callables as one vector callable."""

    def __init__(self, models: Sequence[Callable]):
        self.models = list(models)

    def __call__(self, qd: np.ndarray) -> np.ndarray:
        return np.array([float(np.asarray(m(np.asarray([v])), float).ravel()[0])
                         for m, v in zip(self.models, qd)])


def as_friction(friction: Optional[FrictionLike], n: int) -> Optional[Callable]:
    """Normalise a friction model to ``f(qd (n,)) -> tau_f (n,)`` [N.m].

    Args:
        friction: ``None``, one callable on the joint-velocity vector, or a sequence of ``n``
            per-joint callables on a velocity array (each returning friction torques).
            Models of :mod:`legid_ros.core.friction` are compiled to a fast scalar evaluator.
        n: Number of joints.
    """
    if friction is None or callable(friction):
        return compile_friction(friction)
    models = list(friction)
    if len(models) != n or not all(callable(m) for m in models):
        raise BadInputError(f'friction must be a callable or {n} per-joint callables')
    return _PerJointFriction(models)


@dataclass
class FeedforwardTerms:
    """The parts of one feedforward torque, each (n,) [N.m]."""

    rigid_body: np.ndarray  # M(q) qdd + C(q, qd) qd + G(q)
    gravity: np.ndarray  # G(q), included in rigid_body
    rotor: np.ndarray  # J_rotor qdd
    friction: np.ndarray  # tau_f(qd)

    @property
    def total(self) -> np.ndarray:
        """Total feedforward torque [N.m]."""
        return self.rigid_body + self.rotor + self.friction


class FeedforwardModel:
    """Inverse dynamics of a fixed-base robot from an identified parameter set.

    Args:
        robot: Robot (fixed or floating base; a floating base is evaluated at the neutral base
            pose and zero base velocity and acceleration, i.e. as if the base were fixed).
        pi: Standard inertial parameters (10 per moving body); default the URDF's.
        rotor_inertia: Joint-side rotor inertia per actuated joint [kg.m^2]; default 0.
        friction: Friction model on joint velocities (see :func:`as_friction`); default none.
    """

    def __init__(self, robot: Robot, pi: Optional[np.ndarray] = None,
                 rotor_inertia: Optional[np.ndarray] = None,
                 friction: Optional[FrictionLike] = None):
        self.robot = robot
        self.model = pin.Model(robot.model)
        self.model.armature[:] = 0.0
        self.data = self.model.createData()
        self.joint_names: List[str] = robot.actuated_joint_names
        self.n = len(self.joint_names)
        self._base = self.model.nv - self.n
        self._q = pin.neutral(self.model)
        self._v = np.zeros(self.model.nv)
        self._a = np.zeros(self.model.nv)
        self.parameter_names = parameter_names(self.model)
        self.rotor_inertia = np.zeros(self.n)
        self.friction: Optional[Callable] = None
        if pi is not None:
            self.set_parameters(pi)
        if rotor_inertia is not None:
            self.set_rotor_inertia(rotor_inertia)
        self.set_friction(friction)

    def set_parameters(self, pi: np.ndarray) -> None:
        """Replace the standard inertial parameters (raises BadInputError if malformed)."""
        set_parameters(self.model, pi)

    @property
    def parameters(self) -> np.ndarray:
        """Current standard inertial parameters."""
        return get_parameters(self.model)

    def set_rotor_inertia(self, rotor_inertia: np.ndarray) -> None:
        """Replace the joint-side rotor inertia per joint [kg.m^2]."""
        arr = np.asarray(rotor_inertia, float).ravel()
        if arr.shape != (self.n,) or not np.all(np.isfinite(arr)):
            raise BadInputError(f'rotor inertia must be {self.n} finite values, got {arr}')
        self.rotor_inertia = arr

    def set_friction(self, friction: Optional[FrictionLike]) -> None:
        """Replace the friction model (``None`` for no friction compensation)."""
        self.friction = as_friction(friction, self.n)

    def _check(self, name: str, x) -> np.ndarray:
        arr = np.asarray(x, float).ravel()
        if arr.shape != (self.n,):
            raise BadInputError(f'{name} has {arr.size} values, expected {self.n}')
        if not np.all(np.isfinite(arr)):
            raise BadInputError(f'{name} holds NaN or inf: {arr}')
        return arr

    def _load(self, q, qd_d, qdd_d) -> tuple:
        """Check the inputs and write them into the full configuration vectors."""
        q = self._check('q', q)
        qd_d = self._check('qd_d', qd_d)
        qdd_d = self._check('qdd_d', qdd_d)
        self._q[self.model.nq - self.n:] = q
        self._v[self._base:] = qd_d
        self._a[self._base:] = qdd_d
        return q, qd_d, qdd_d

    def _friction(self, qd_d: np.ndarray) -> np.ndarray:
        if self.friction is None:
            return np.zeros(self.n)
        return np.asarray(self.friction(qd_d), float).reshape(self.n)

    def terms(self, q, qd_d, qdd_d) -> FeedforwardTerms:
        """The feedforward split into rigid-body, rotor and friction parts [N.m]."""
        q, qd_d, qdd_d = self._load(q, qd_d, qdd_d)
        b = self._base
        rb = pin.rnea(self.model, self.data, self._q, self._v, self._a)[b:].copy()
        grav = pin.computeGeneralizedGravity(self.model, self.data, self._q)[b:].copy()
        return FeedforwardTerms(rigid_body=rb, gravity=grav, rotor=self.rotor_inertia * qdd_d,
                                friction=self._friction(qd_d))

    def torque(self, q, qd_d, qdd_d) -> np.ndarray:
        """Feedforward torque at one sample, (n,) [N.m].

        Args:
            q: Joint positions (measured or desired) [rad].
            qd_d: Desired joint velocities [rad/s].
            qdd_d: Desired joint accelerations [rad/s^2].

        Raises:
            BadInputError: wrong sizes or non-finite values.
        """
        return self.torque_unchecked(*self._load(q, qd_d, qdd_d))

    def torque_unchecked(self, q: np.ndarray, qd_d: np.ndarray, qdd_d: np.ndarray
                         ) -> np.ndarray:
        """:meth:`torque` for inputs already known to be finite float arrays of shape (n,)."""
        nq, b = self.model.nq, self._base
        self._q[nq - self.n:] = q
        self._v[b:] = qd_d
        self._a[b:] = qdd_d
        tau = pin.rnea(self.model, self.data, self._q, self._v, self._a)[b:]
        tau = tau + self.rotor_inertia * qdd_d
        if self.friction is not None:
            tau += self.friction(qd_d)
        return tau

    def torque_batch(self, q: np.ndarray, qd_d: np.ndarray, qdd_d: np.ndarray) -> np.ndarray:
        """Feedforward torques along a trajectory, (N, n) [N.m]."""
        q, qd_d, qdd_d = (np.atleast_2d(np.asarray(x, float)) for x in (q, qd_d, qdd_d))
        return np.array([self.torque(a, b, c) for a, b, c in zip(q, qd_d, qdd_d)])



def from_identification(robot: Robot, result) -> FeedforwardModel:
    """Feedforward model from an identification result.

    Args:
        robot: The robot the result was identified on.
        result: Anything with ``pi`` (standard parameters), ``reflected_inertia`` (joint-side
            rotor inertia [kg.m^2]) and ``friction`` (callable on joint velocities), such as
            :class:`legid_ros.core.identification.result.LegIdentResult`.
    """
    return FeedforwardModel(robot, pi=np.asarray(result.pi, float),
                            rotor_inertia=np.asarray(result.reflected_inertia, float),
                            friction=result.friction)
