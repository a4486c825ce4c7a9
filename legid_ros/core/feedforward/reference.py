"""Joint reference trajectories (whole or streamed) sampled by the controller."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from legid_ros.core.errors import BadInputError


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
