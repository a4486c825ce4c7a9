"""Reference joint trajectories for closed-loop tracking in MuJoCo.

:func:`legid_ros.core.sim.leg_closed_loop.run_tracking` tracks anything with
``sample(t) -> (q, qd, qdd)``; these are the two the feedforward benchmark and its tests use: a
finite Fourier series (the geared leg's validation trajectory after Xiao, Qian & Luo 2025,
random excitations) and samples linearly interpolated (e.g. a friction sweep). Pure numpy (no
MuJoCo).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class SampledTrajectory:
    """A trajectory given by samples, linearly interpolated (e.g. a friction sweep).

    Attributes:
        t: Times [s], increasing, (K,). q, qd, qdd: (K, n) [rad, rad/s, rad/s^2].
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray

    @property
    def duration_s(self) -> float:
        """Length [s]."""
        return float(self.t[-1] - self.t[0])

    def sample(self, t) -> tuple:
        """``(q, qd, qdd)`` at times ``t`` [s] (held at the ends)."""
        t_arr = np.atleast_1d(np.asarray(t, float))
        out = tuple(np.stack([np.interp(t_arr, self.t, a[:, j]) for j in range(a.shape[1])],
                             axis=1) for a in (self.q, self.qd, self.qdd))
        return tuple(a[0] for a in out) if np.ndim(t) == 0 else out


@dataclass
class FourierTrajectory:
    """Joint trajectory ``q_i(t) = q0_i + sum_k a_ik/(k w) sin(k w t) - b_ik/(k w) cos(k w t)``.

    Attributes:
        omega: Fundamental angular frequency [rad/s].
        q0: Offsets [rad], (n,).
        a: Sine coefficients [rad/s], (n, K).
        b: Cosine coefficients [rad/s], (n, K).
    """

    omega: float
    q0: np.ndarray
    a: np.ndarray
    b: np.ndarray

    @classmethod
    def geared_leg_validation(cls) -> 'FourierTrajectory':
        """A 3-harmonic validation trajectory for leg3 at omega = 2.4 rad/s.

        The tracking test of Xiao, Qian & Luo 2025 uses omega = 2.4 rad/s; its coefficients
        are not in the text we have, so ours give amplitudes of 0.2-0.5 rad, peak speeds of
        1-2.5 rad/s and slow reversals, inside the joint limits.
        """
        a = np.array([[0.50, 0.20, -0.15], [0.80, -0.30, 0.20], [0.90, 0.35, -0.25]])
        b = np.array([[0.20, -0.15, 0.10], [-0.30, 0.25, 0.15], [0.35, -0.20, 0.10]])
        return cls(2.4, np.array([0.0, 0.3, 1.3]), a, b)

    @classmethod
    def random(cls, q0, amplitude, omega: float, harmonics: int = 5, qd_max=None,
               seed: int = 0) -> 'FourierTrajectory':
        """Random coefficients (decaying with the harmonic), scaled per joint so that
        ``max |q - q0| = amplitude`` [rad] and ``max |qd| <= qd_max`` [rad/s] over a period."""
        rng = np.random.default_rng(seed)
        q0 = np.asarray(q0, float)
        n = q0.size
        k = np.arange(1, harmonics + 1)
        a = rng.uniform(-1, 1, (n, harmonics)) / k
        b = rng.uniform(-1, 1, (n, harmonics)) / k
        traj = cls(omega, q0, a, b)
        q, qd, _ = traj.sample(np.linspace(0, 2 * np.pi / omega, 2000))
        scale = np.asarray(amplitude, float) / np.abs(q - q0).max(axis=0)
        if qd_max is not None:
            scale = np.minimum(scale, np.asarray(qd_max, float) / np.abs(qd).max(axis=0))
        return cls(omega, q0, a * scale[:, None], b * scale[:, None])

    def sample(self, t) -> tuple:
        """``(q, qd, qdd)`` at times ``t`` [s]: shapes (n,) for a scalar, else (N, n)."""
        t_arr = np.atleast_1d(np.asarray(t, float))
        k = np.arange(1, self.a.shape[1] + 1)
        wk = self.omega * k
        s, c = np.sin(np.outer(t_arr, wk)), np.cos(np.outer(t_arr, wk))
        q = self.q0 + s @ (self.a / wk).T - c @ (self.b / wk).T
        qd = c @ self.a.T + s @ self.b.T
        qdd = -s @ (self.a * wk).T + c @ (self.b * wk).T
        if np.ndim(t) == 0:
            return q[0], qd[0], qdd[0]
        return q, qd, qdd
