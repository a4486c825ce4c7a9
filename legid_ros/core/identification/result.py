"""The results identification returns: one for each use of the library.

- :class:`IdentResult`: a floating-base robot's standard parameters as every method of
  :func:`legid_ros.core.identification.api.identify` and the online estimator return them
  (with the fit, the excitation report and the physical consistency);
- :class:`LegIdentResult`: the fixed-base use (:mod:`legid_ros.core.identification.fixed_base`,
  :mod:`legid_ros.core.identification.solvers.robust`), what the feedforward controller of
  Xiao, Qian & Luo 2025 consumes: the links' consistent standard parameters, the rotor
  inertias and the per-joint friction model. ``result.torque(robot, q, qd, qdd)`` predicts
  joint torques; ``result.model(robot)`` returns a pinocchio model carrying the identified
  inertias and the reflected rotor inertias as ``armature``; ``to_dict``/``from_dict`` and
  ``save``/``load`` round-trip through YAML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Union

import numpy as np
import pinocchio as pin
import yaml

from legid_ros.core.errors import BadInputError
from legid_ros.core.friction.models import JointFriction
from legid_ros.core.inertial import ConsistencyReport, check_consistency, set_parameters
from legid_ros.core.robot import Robot, body_names


@dataclass
class IdentResult:
    """An identified parameter set and how it was obtained.

    Attributes:
        method: Method name ('zmp_newton', 'zmp_qp', 'torque_ls', 'floating_qp', 'sdp',
            'primitives', 'online').
        pi: Identified standard parameters (10 per moving body) [kg, kg.m, kg.m^2].
        x: Parameters in the method's own set (equal to ``pi`` for the standard set).
        names: Names of ``x``.
        param_names: Names of ``pi``.
        total_mass: Total mass the solution was constrained to [kg].
        condition_number: Condition number of the scaled identifiable core (see
            :mod:`legid_ros.core.identification.identifiability`).
        residual_rms: RMS residual of the fitted rows (metres for ZMP rows, N.m for torques).
        solve_time_s: Solver time [s].
        iterations: Solver iterations.
        consistency: Physical consistency of ``pi``.
        identifiable: Readable lines: excited parameter combinations and their spread.
        friction: Per-joint viscous [N.m.s/rad] then Coulomb [N.m] coefficients, if fitted.
        n_samples: Samples used.
        dropped: Reason -> number of samples dropped (NaN/inf, unloaded, double support).
        info: Extra method facts (solver status, weights, regularisation, ...).
        uncertainty: Standard deviation per core parameter and per identifiable combination
            (:class:`legid_ros.core.identification.uncertainty.Uncertainty`), set by
            :func:`legid_ros.core.identification.api.identify`; None when not computed.
        physical: What the data determine, first (total mass, whole-body COM, determined group
            combinations), then per link flagged determined or held at CAD
            (:class:`legid_ros.core.identification.summary.PhysicalSummary`); None when not
            computed.
    """

    method: str
    pi: np.ndarray
    x: np.ndarray
    names: List[str]
    param_names: List[str]
    total_mass: float
    condition_number: float
    residual_rms: float
    solve_time_s: float
    iterations: int
    consistency: ConsistencyReport
    identifiable: List[str] = field(default_factory=list)
    friction: Optional[np.ndarray] = None
    n_samples: int = 0
    dropped: Dict[str, int] = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    uncertainty: Optional[object] = None
    physical: Optional[object] = None

    def summary(self, physical: bool = True) -> str:
        """A few readable lines: what the data determine first (``physical``), then the
        fit."""
        lines = self.physical.lines() if physical and self.physical is not None else []
        lines += [f'method {self.method}: {self.n_samples} samples, total mass '
                 f'{self.total_mass:.3f} kg, residual rms {self.residual_rms:.4g}, condition '
                 f'number {self.condition_number:.3g}, {self.iterations} iterations, '
                 f'{self.solve_time_s * 1e3:.1f} ms, consistent: {self.consistency.ok}']
        if self.dropped:
            lines.append('dropped samples: ' + ', '.join(f'{k}: {v}'
                                                         for k, v in self.dropped.items()))
        if self.info.get('known'):
            lines.append('held fixed (measured otherwise): ' + ', '.join(
                f'{k} = {v:g}' for k, v in self.info['known'].items()))
        if self.info.get('converged') is False:
            lines.append(f"solver NOT converged (status {self.info.get('status')!r}, KKT "
                         f"residual {self.info.get('kkt_residual')}): the parameters are its "
                         'last iterate')
        lines += self.identifiable
        if self.uncertainty is not None and self.physical is None:
            lines += self.uncertainty.lines()
        return '\n'.join(lines)


@dataclass
class LegIdentResult:
    """Identified dynamics of a geared fixed-base leg.

    Attributes:
        method: 'two_step', 'unified_cv', 'unified_stribeck', 'robust', ...
        robot: Robot name.
        joint_names: Joints in column order.
        link_names: Links carrying the standard parameters, 10 each.
        pi: Standard link parameters (pinocchio order) [kg, kg.m, kg.m^2].
        rotor_inertia: Motor-side rotor inertia per joint [kg.m^2].
        gear_ratio: Gear ratio per joint [-].
        friction: Per-joint friction model.
        beta: Identified base parameters.
        base_names: Names of the base parameters.
        consistency: Physical consistency of ``pi``.
        meta: Solver status, residual RMS [N.m], iterations, ...
    """

    method: str
    robot: str
    joint_names: List[str]
    link_names: List[str]
    pi: np.ndarray
    rotor_inertia: np.ndarray
    gear_ratio: np.ndarray
    friction: JointFriction
    beta: np.ndarray = field(default_factory=lambda: np.zeros(0))
    base_names: List[str] = field(default_factory=list)
    consistency: Optional[ConsistencyReport] = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.consistency is None:
            self.consistency = check_consistency(self.pi, self.link_names)

    @property
    def reflected_inertia(self) -> np.ndarray:
        """Joint-side rotor inertia ``ratio^2 J`` [kg.m^2]."""
        return self.gear_ratio ** 2 * self.rotor_inertia

    @property
    def consistent(self) -> bool:
        """Whether the link parameters are physically consistent and rotor inertias > 0."""
        return bool(self.consistency.ok and np.all(self.rotor_inertia > 0))

    def model(self, robot: Robot) -> pin.Model:
        """Copy of ``robot.model`` with the identified inertias and rotor armature."""
        if body_names(robot.model) != self.link_names:
            raise BadInputError(f'result is for links {self.link_names}, robot has '
                                f'{body_names(robot.model)}')
        model = pin.Model(robot.model)
        set_parameters(model, self.pi)
        model.armature = np.asarray(self.reflected_inertia, float).copy()
        return model

    def torque(self, robot: Robot, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
               with_friction: bool = True) -> np.ndarray:
        """Predicted joint torques [N.m], shape like ``q`` ((nj,) or (N, nj))."""
        model = self.model(robot)
        data = model.createData()
        q2, qd2, qdd2 = (np.atleast_2d(np.asarray(a, float)) for a in (q, qd, qdd))
        out = np.array([pin.rnea(model, data, a, b, c) for a, b, c in zip(q2, qd2, qdd2)])
        # pinocchio's rnea and crba include model.armature (the reflected rotor inertia)
        if with_friction:
            out = out + self.friction(qd2)
        return out.reshape(np.shape(q))

    def to_dict(self) -> Dict:
        """Plain-python form (YAML/JSON friendly)."""
        return {'method': self.method, 'robot': self.robot, 'joint_names': self.joint_names,
                'link_names': self.link_names, 'pi': [float(x) for x in self.pi],
                'rotor_inertia_kg_m2': [float(x) for x in self.rotor_inertia],
                'gear_ratio': [float(x) for x in self.gear_ratio],
                'friction': self.friction.params,
                'beta': [float(x) for x in self.beta], 'base_names': list(self.base_names),
                'consistent': self.consistent,
                'meta': {k: v for k, v in self.meta.items()
                         if isinstance(v, (int, float, str, bool, list))}}

    @classmethod
    def from_dict(cls, d: Dict) -> 'LegIdentResult':
        """Inverse of :meth:`to_dict`."""
        return cls(method=d['method'], robot=d['robot'], joint_names=list(d['joint_names']),
                   link_names=list(d['link_names']), pi=np.asarray(d['pi'], float),
                   rotor_inertia=np.asarray(d['rotor_inertia_kg_m2'], float),
                   gear_ratio=np.asarray(d['gear_ratio'], float),
                   friction=JointFriction.from_dict(d['friction']),
                   beta=np.asarray(d.get('beta', []), float),
                   base_names=list(d.get('base_names', [])), meta=dict(d.get('meta', {})))

    def save(self, path: Union[str, Path]) -> None:
        """Write the result as YAML."""
        Path(path).write_text(yaml.safe_dump(self.to_dict(), sort_keys=False))

    @classmethod
    def load(cls, path: Union[str, Path]) -> 'LegIdentResult':
        """Read a result written by :meth:`save`."""
        return cls.from_dict(yaml.safe_load(Path(path).read_text()))
