"""A recording of a legged robot's sensors: the arrays every method consumes.

One container for synthetic data, MuJoCo physics runs and rosbag2 files, so identification
never cares where the data came from. Conventions:

- World frame: flat ground at z = 0, z up; for the biped, the support sole centre at the start.
- ``foot_wrench[foot]``: wrench exerted by the ground on the foot, expressed at the origin and
  in the axes of the foot's F/T frame: ``[fx, fy, fz, tx, ty, tz]`` [N, N.m].
- ``ankle_ft[foot]`` (optional): raw reading of the 6-axis F/T sensor between the ankle and the
  foot, at the F/T frame: the wrench the leg exerts on the foot (MuJoCo's force/torque sensor
  convention), i.e. the foot's own gravity and inertia wrench minus ``foot_wrench``. In
  swing it measures the foot alone (:mod:`legid_ros.core.identification.rows.foot_ft`).
- ``fsr[foot]``: normal force at each sole sensor frame, in the description's order [N].
- ``imu_quat``: orientation of the IMU frame in the world, ``[x, y, z, w]``; ``imu_gyro``
  angular velocity [rad/s] and ``imu_acc`` specific force (acceleration minus gravity)
  [m/s^2], both in the IMU frame.
- Quantities named ``*_true`` are ground truth, never available on a real robot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np

from legid_ros.core.errors import BadInputError


@dataclass
class Recording:
    """Time series of one run.

    Attributes:
        robot: Robot name ('biped', ...).
        t: Sample times [s], shape (N,).
        joint_names: Actuated joint names, in column order.
        q: Joint positions [rad or m], (N, nj).
        qd: Joint velocities [rad/s], (N, nj); NaN if not measured.
        tau: Joint efforts [N.m], (N, nj); NaN if not measured.
        imu_quat: IMU orientation [x, y, z, w], (N, 4).
        imu_gyro: IMU angular velocity [rad/s], (N, 3).
        imu_acc: IMU specific force [m/s^2], (N, 3).
        foot_wrench: Per foot, ground-on-foot wrench in the F/T frame, (N, 6) [N, N.m].
        fsr: Per foot, sole-sensor normal forces, (N, k) [N].
        ankle_ft: Per foot, raw ankle F/T reading (leg-on-foot wrench) in the F/T frame,
            (N, 6) [N, N.m]; empty if the robot has none.
        qdd_true: Exact joint accelerations [rad/s^2], (N, nj), if known.
        base_pose_true: Base position [m] and quaternion [x, y, z, w], (N, 7), if known.
        base_vel_true: Base twist in the base frame (pinocchio's v[:6]) [m/s, rad/s], (N, 6).
        base_acc_true: Base spatial acceleration in the base frame, (N, 6).
        zmp_true: True ZMP in the world [m], (N, 2), if known.
        pi_true: True standard inertial parameters, if known.
        pi_cad: Nominal (CAD) standard parameters of the same model.
        param_names: Names of the standard parameters.
        meta: Free-form facts (rate [Hz], seed, engine, noise, ...).
    """

    robot: str
    t: np.ndarray
    joint_names: List[str]
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray
    imu_quat: np.ndarray
    imu_gyro: np.ndarray
    imu_acc: np.ndarray
    foot_wrench: Dict[str, np.ndarray] = field(default_factory=dict)
    fsr: Dict[str, np.ndarray] = field(default_factory=dict)
    ankle_ft: Dict[str, np.ndarray] = field(default_factory=dict)
    qdd_true: Optional[np.ndarray] = None
    base_pose_true: Optional[np.ndarray] = None
    base_vel_true: Optional[np.ndarray] = None
    base_acc_true: Optional[np.ndarray] = None
    zmp_true: Optional[np.ndarray] = None
    pi_true: Optional[np.ndarray] = None
    pi_cad: Optional[np.ndarray] = None
    param_names: List[str] = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        n = len(self.t)
        nj = len(self.joint_names)
        for name in ('q', 'qd', 'tau'):
            arr = getattr(self, name)
            if arr.shape != (n, nj):
                raise BadInputError(f'{name} has shape {arr.shape}, expected {(n, nj)}')
        for name, width in (('imu_quat', 4), ('imu_gyro', 3), ('imu_acc', 3)):
            if getattr(self, name).shape != (n, width):
                raise BadInputError(f'{name} has shape {getattr(self, name).shape}')
        for foot, arr in self.ankle_ft.items():
            if np.shape(arr) != (n, 6):
                raise BadInputError(f'ankle_ft[{foot!r}] has shape {np.shape(arr)}, '
                                    f'expected {(n, 6)}')

    @property
    def n(self) -> int:
        """Number of samples."""
        return len(self.t)

    @property
    def rate(self) -> float:
        """Mean sample rate [Hz]."""
        return float((self.n - 1) / (self.t[-1] - self.t[0])) if self.n > 1 else 0.0

    def slice(self, start: int, stop: int, step: int = 1) -> 'Recording':
        """Samples ``start:stop:step`` of every time series (a copy)."""
        sl = slice(start, stop, step)

        def cut(x):
            return None if x is None else np.array(x[sl])
        return Recording(
            robot=self.robot, t=cut(self.t), joint_names=list(self.joint_names), q=cut(self.q),
            qd=cut(self.qd), tau=cut(self.tau), imu_quat=cut(self.imu_quat),
            imu_gyro=cut(self.imu_gyro), imu_acc=cut(self.imu_acc),
            foot_wrench={k: cut(v) for k, v in self.foot_wrench.items()},
            fsr={k: cut(v) for k, v in self.fsr.items()},
            ankle_ft={k: cut(v) for k, v in self.ankle_ft.items()}, qdd_true=cut(self.qdd_true),
            base_pose_true=cut(self.base_pose_true), base_vel_true=cut(self.base_vel_true),
            base_acc_true=cut(self.base_acc_true), zmp_true=cut(self.zmp_true),
            pi_true=self.pi_true, pi_cad=self.pi_cad, param_names=list(self.param_names),
            meta=dict(self.meta))

    def save_npz(self, path) -> Path:
        """Save as a compressed ``.npz`` (no pickle)."""
        arrays = {'t': self.t, 'q': self.q, 'qd': self.qd, 'tau': self.tau,
                  'imu_quat': self.imu_quat, 'imu_gyro': self.imu_gyro, 'imu_acc': self.imu_acc,
                  'joint_names': np.array(self.joint_names),
                  'param_names': np.array(self.param_names, dtype=str),
                  'robot': np.array(self.robot), 'meta_keys': np.array(list(self.meta), str),
                  'meta_values': np.array([repr(v) for v in self.meta.values()], str)}
        for k, v in self.foot_wrench.items():
            arrays[f'foot_wrench__{k}'] = v
        for k, v in self.fsr.items():
            arrays[f'fsr__{k}'] = v
        for k, v in self.ankle_ft.items():
            arrays[f'ankle_ft__{k}'] = v
        for k in ('qdd_true', 'base_pose_true', 'base_vel_true', 'base_acc_true', 'zmp_true',
                  'pi_true', 'pi_cad'):
            if getattr(self, k) is not None:
                arrays[k] = getattr(self, k)
        path = Path(path)
        np.savez_compressed(path, **arrays)
        return path

    @classmethod
    def load_npz(cls, path) -> 'Recording':
        """Load a recording written by :meth:`save_npz`."""
        import ast

        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
        meta = {}
        for k, v in zip(data.pop('meta_keys'), data.pop('meta_values')):
            try:
                meta[str(k)] = ast.literal_eval(str(v))
            except (ValueError, SyntaxError):
                meta[str(k)] = str(v)
        fw = {k.split('__', 1)[1]: data.pop(k) for k in list(data)
              if k.startswith('foot_wrench__')}
        fsr = {k.split('__', 1)[1]: data.pop(k) for k in list(data) if k.startswith('fsr__')}
        aft = {k.split('__', 1)[1]: data.pop(k) for k in list(data)
               if k.startswith('ankle_ft__')}
        return cls(robot=str(data.pop('robot')),
                   joint_names=[str(x) for x in data.pop('joint_names')],
                   param_names=[str(x) for x in data.pop('param_names')], foot_wrench=fw, fsr=fsr,
                   ankle_ft=aft, meta=meta, **data)
