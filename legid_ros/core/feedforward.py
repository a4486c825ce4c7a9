"""Model-based feedforward and the PD + feedforward joint controller of seed 001.

``tau_ff = (J_rotor + M(q)) qdd_d + C(q, qd_d) qd_d + G(q) + tau_f(qd_d)``, with the rigid-body
terms from pinocchio's RNEA on any standard inertial parameter set, ``J_rotor`` the reflected
rotor inertia per joint (``gear_ratio^2 * rotor_inertia`` on the joint side [kg.m^2]) and
``tau_f`` any friction model. The controller adds a PD on the tracking error:
``tau = tau_ff + Kp (q_d - q) + Kd (qd_d - qd)`` and clamps it to the URDF effort limits,
counting every clamp in its diagnostics.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Union

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError
from legid_ros.core.inertial import get_parameters, parameter_names, set_parameters
from legid_ros.core.robot import Robot

LOG = logging.getLogger(__name__)

SEED001_KP = (1500.0, 1000.0, 1000.0)  # [N.m/rad] hip ab/ad, hip flexion, knee
SEED001_KD = (800.0, 500.0, 500.0)  # [N.m.s/rad]

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
        n: Number of joints.
    """
    if friction is None or callable(friction):
        return friction
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
        q, qd_d, qdd_d = self._load(q, qd_d, qdd_d)
        tau = pin.rnea(self.model, self.data, self._q, self._v, self._a)[self._base:]
        return tau + self.rotor_inertia * qdd_d + self._friction(qd_d)

    def torque_batch(self, q: np.ndarray, qd_d: np.ndarray, qdd_d: np.ndarray) -> np.ndarray:
        """Feedforward torques along a trajectory, (N, n) [N.m]."""
        q, qd_d, qdd_d = (np.atleast_2d(np.asarray(x, float)) for x in (q, qd_d, qdd_d))
        return np.array([self.torque(a, b, c) for a, b, c in zip(q, qd_d, qdd_d)])


@dataclass
class PdGains:
    """Joint-space PD gains.

    Attributes:
        kp: Proportional gains [N.m/rad], (n,).
        kd: Derivative gains [N.m.s/rad], (n,).
    """

    kp: np.ndarray
    kd: np.ndarray

    def __post_init__(self):
        self.kp = np.asarray(self.kp, float).ravel()
        self.kd = np.asarray(self.kd, float).ravel()
        if self.kp.shape != self.kd.shape or np.any(self.kp < 0) or np.any(self.kd < 0):
            raise BadInputError('kp and kd must have the same length and be >= 0')

    @classmethod
    def seed001(cls) -> 'PdGains':
        """Seed 001's gains for the 3-joint leg: Kp = [1500, 1000, 1000], Kd = [800, 500, 500]."""
        return cls(np.array(SEED001_KP), np.array(SEED001_KD))


def default_gains(robot: Robot) -> PdGains:
    """Seed 001's gains for a 3-joint leg; for other robots, seed 001's knee gains per joint."""
    n = len(robot.actuated_joint_names)
    if n == 3:
        return PdGains.seed001()
    return PdGains(np.full(n, SEED001_KP[2]), np.full(n, SEED001_KD[2]))


@dataclass
class ControlOutput:
    """One controller cycle.

    Attributes:
        tau: Commanded torque after saturation [N.m], (n,).
        tau_ff: Feedforward part [N.m] (zeros without a model).
        tau_pd: PD part [N.m].
        saturated: Per joint, whether the command was clamped.
    """

    tau: np.ndarray
    tau_ff: np.ndarray
    tau_pd: np.ndarray
    saturated: np.ndarray


@dataclass
class ControllerDiagnostics:
    """Counters of a controller since construction or :meth:`PdFeedforwardController.reset`.

    Attributes:
        cycles: Cycles computed.
        saturated_cycles: Cycles with at least one joint clamped.
        saturated_per_joint: Clamps per joint.
        max_abs_error: Largest |q_d - q| seen per joint [rad].
    """

    cycles: int = 0
    saturated_cycles: int = 0
    saturated_per_joint: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    max_abs_error: np.ndarray = field(default_factory=lambda: np.zeros(0))


class PdFeedforwardController:
    """``tau = sat(tau_ff + Kp (q_d - q) + Kd (qd_d - qd))`` with saturation bookkeeping.

    Args:
        n: Number of joints.
        gains: PD gains.
        feedforward: Model for ``tau_ff``; ``None`` for PD only.
        effort_limit: Per-joint torque limit [N.m]; default none (inf).
        ff_at_measured_q: Evaluate M, C, G at the measured ``q`` (seed 001) or else at ``q_d``.
    """

    def __init__(self, n: int, gains: PdGains, feedforward: Optional[FeedforwardModel] = None,
                 effort_limit: Optional[np.ndarray] = None, ff_at_measured_q: bool = True):
        if gains.kp.shape != (n,):
            raise BadInputError(f'gains have {gains.kp.size} joints, expected {n}')
        if feedforward is not None and feedforward.n != n:
            raise BadInputError(f'feedforward model has {feedforward.n} joints, expected {n}')
        self.n = n
        self.gains = gains
        self.feedforward = feedforward
        lim = np.full(n, np.inf) if effort_limit is None else np.asarray(effort_limit, float)
        if lim.shape != (n,) or np.any(lim <= 0):
            raise BadInputError(f'effort limits must be {n} positive values')
        self.effort_limit = lim
        self.ff_at_measured_q = ff_at_measured_q
        self.diagnostics = ControllerDiagnostics()
        self.last_ff_s = 0.0  # [s] compute time of the last tau_ff
        self.reset()

    @classmethod
    def for_robot(cls, robot: Robot, feedforward: Optional[FeedforwardModel] = None,
                  gains: Optional[PdGains] = None, **kwargs) -> 'PdFeedforwardController':
        """Controller with the robot's default gains and the URDF effort limits."""
        n = len(robot.actuated_joint_names)
        lim = np.asarray(robot.model.effortLimit[-n:], float)
        lim = np.where(lim > 0, lim, np.inf)
        return cls(n, gains or default_gains(robot), feedforward, lim, **kwargs)

    def reset(self) -> None:
        """Zero the diagnostics counters."""
        self.diagnostics = ControllerDiagnostics(
            saturated_per_joint=np.zeros(self.n, int), max_abs_error=np.zeros(self.n))

    def _vec(self, name: str, x) -> np.ndarray:
        arr = np.asarray(x, float).ravel()
        if arr.shape != (self.n,) or not np.all(np.isfinite(arr)):
            raise BadInputError(f'{name} must be {self.n} finite values, got {arr}')
        return arr

    def step(self, q, qd, q_d, qd_d, qdd_d) -> ControlOutput:
        """One control cycle.

        Args:
            q: Measured positions [rad]. qd: measured velocities [rad/s].
            q_d: Desired positions [rad]. qd_d: desired velocities [rad/s].
            qdd_d: Desired accelerations [rad/s^2].

        Raises:
            BadInputError: wrong sizes or non-finite values (no command is produced).
        """
        q, qd = self._vec('q', q), self._vec('qd', qd)
        q_d, qd_d, qdd_d = self._vec('q_d', q_d), self._vec('qd_d', qd_d), self._vec(
            'qdd_d', qdd_d)
        if self.feedforward is None:
            tau_ff = np.zeros(self.n)
            self.last_ff_s = 0.0
        else:
            t0 = time.perf_counter()
            tau_ff = self.feedforward.torque(q if self.ff_at_measured_q else q_d, qd_d, qdd_d)
            self.last_ff_s = time.perf_counter() - t0
        err = q_d - q
        tau_pd = self.gains.kp * err + self.gains.kd * (qd_d - qd)
        raw = tau_ff + tau_pd
        tau = np.clip(raw, -self.effort_limit, self.effort_limit)
        sat = tau != raw
        d = self.diagnostics
        d.cycles += 1
        np.maximum(d.max_abs_error, np.abs(err), out=d.max_abs_error)
        if sat.any():
            if d.saturated_cycles == 0:
                LOG.warning('effort saturated on %s (further clamps only counted)',
                            [i for i in np.flatnonzero(sat)])
            d.saturated_cycles += 1
            d.saturated_per_joint += sat
        return ControlOutput(tau=tau, tau_ff=tau_ff, tau_pd=tau_pd, saturated=sat)


def from_identification(robot: Robot, result) -> FeedforwardModel:
    """Feedforward model from an identification result.

    Args:
        robot: The robot the result was identified on.
        result: Anything with ``pi`` (standard parameters), ``reflected_inertia`` (joint-side
            rotor inertia [kg.m^2]) and ``friction`` (callable on joint velocities), such as
            :class:`legid_ros.core.leg_ident.result.LegIdentResult`.
    """
    return FeedforwardModel(robot, pi=np.asarray(result.pi, float),
                            rotor_inertia=np.asarray(result.reflected_inertia, float),
                            friction=result.friction)


@dataclass
class ReferenceTrajectory:
    """A joint reference (whole trajectory or one streamed point), in the model's joint order.

    Attributes:
        t: Times of the points from the start ``t0`` [s], strictly increasing, (K,).
        q: Positions [rad], (K, n).
        qd: Velocities [rad/s], (K, n).
        qdd: Accelerations [rad/s^2], (K, n).
        t0: Start time on the controller's clock [s].
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    t0: float = 0.0

    @classmethod
    def from_points(cls, model_joints: Sequence[str], names: Sequence[str], t, q, qd=None,
                    qdd=None, t0: float = 0.0) -> 'ReferenceTrajectory':
        """Validate and reorder points given for joints ``names`` into ``model_joints`` order.

        Missing velocities (accelerations) are the slope of the positions (velocities), or zero
        for a single point.

        Raises:
            BadInputError: unknown, missing or repeated joints, non-finite values, empty or
                non-increasing times, ragged arrays.
        """
        names = list(names)
        unknown = [n for n in names if n not in model_joints]
        missing = [n for n in model_joints if n not in names]
        if unknown or missing or len(set(names)) != len(names):
            raise BadInputError(f'reference joints {names} do not match the model joints '
                                f'{list(model_joints)} (unknown {unknown}, missing {missing})')
        order = [names.index(n) for n in model_joints]
        t = np.asarray(t, float).ravel()
        k = t.size
        if k == 0 or (k > 1 and np.any(np.diff(t) <= 0)):
            raise BadInputError('reference times must be non-empty and strictly increasing')

        def arr(x, name):
            a = np.asarray(x, float)
            if a.shape != (k, len(names)):
                raise BadInputError(f'reference {name} has shape {a.shape}, expected '
                                    f'({k}, {len(names)})')
            return a[:, order]

        q = arr(q, 'positions')
        qd = arr(qd, 'velocities') if qd is not None else (
            np.gradient(q, t, axis=0) if k > 1 else np.zeros_like(q))
        qdd = arr(qdd, 'accelerations') if qdd is not None else (
            np.gradient(qd, t, axis=0) if k > 1 else np.zeros_like(q))
        for name, a in (('times', t), ('positions', q), ('velocities', qd),
                        ('accelerations', qdd)):
            if not np.all(np.isfinite(a)):
                raise BadInputError(f'reference {name} hold NaN or inf')
        return cls(t, q, qd, qdd, float(t0))

    @property
    def end_time(self) -> float:
        """Time of the last point on the controller's clock [s]."""
        return self.t0 + float(self.t[-1])

    def sample(self, now: float) -> tuple:
        """``(q_d, qd_d, qdd_d)`` at time ``now`` [s]: linear interpolation between points,
        the first point before the start, the last position at rest after the end (a single
        streamed point is used as it is)."""
        if self.t.size == 1:
            return self.q[0], self.qd[0], self.qdd[0]
        s = now - self.t0
        if s <= self.t[0]:
            return self.q[0], self.qd[0], self.qdd[0]
        if s >= self.t[-1]:
            z = np.zeros_like(self.q[-1])
            return self.q[-1], z, z
        i = int(np.searchsorted(self.t, s)) - 1
        w = (s - self.t[i]) / (self.t[i + 1] - self.t[i])
        return tuple((1 - w) * a[i] + w * a[i + 1] for a in (self.q, self.qd, self.qdd))
