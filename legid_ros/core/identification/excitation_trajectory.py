"""Excitation trajectories: 5-harmonic Fourier series plus a 5th-order polynomial.

``q_j(t) = q0_j + sum_k [a_jk/(w_f k) sin(w_f k t) - b_jk/(w_f k) cos(w_f k t)] + p_j(t)``
where the quintic ``p_j`` makes the offset from ``q0``, the velocity and the acceleration zero at
``t = 0`` and ``t = T`` (smooth start and stop; Xiao, Qian & Luo 2025 and Zhu & Zhang). Every
sample of ``q, qd, qdd`` is linear in the coefficients, so position, velocity and acceleration
limits are linear constraints; the coefficients are optimised (SLSQP) to minimise the condition
number of the base regressor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np
from scipy.optimize import minimize

from legid_ros.core.errors import BadInputError, InfeasibleProblemError, SolverError


@dataclass
class FourierExcitation:
    """Fourier + quintic excitation of ``nj`` joints.

    Attributes:
        period: Base period ``T = 2 pi / w_f`` [s].
        q0: Centre position per joint [rad].
        coeffs: ``(nj, 2 n_harm)`` coefficients ``[a_1..a_n, b_1..b_n]`` [rad/s].
    """

    period: float
    q0: np.ndarray
    coeffs: np.ndarray

    @property
    def n_harm(self) -> int:
        """Number of harmonics."""
        return self.coeffs.shape[1] // 2

    def basis(self, t: np.ndarray):
        """``(G0, G1, G2)``: (N, 2 n_harm) maps from one joint's coefficients to q, qd, qdd."""
        return excitation_basis(np.asarray(t, float), self.period, self.n_harm)

    def evaluate(self, t: np.ndarray):
        """``(q, qd, qdd)`` at times ``t`` [s], each (N, nj)."""
        g0, g1, g2 = self.basis(t)
        c = self.coeffs.T
        return self.q0 + g0 @ c, g1 @ c, g2 @ c

    def sample(self, rate: float, cycles: int = 1):
        """``(t, q, qd, qdd)`` over ``cycles`` periods at ``rate`` [Hz]."""
        t = np.arange(int(round(cycles * self.period * rate)) + 1) / rate
        q, qd, qdd = self.evaluate(np.mod(t, self.period))
        return t, q, qd, qdd


def _quintic_rows(t: np.ndarray):
    p = np.arange(6)
    tp = t[:, None] ** p
    d1 = np.zeros_like(tp)
    d2 = np.zeros_like(tp)
    d1[:, 1:] = p[1:] * t[:, None] ** (p[1:] - 1)
    d2[:, 2:] = p[2:] * (p[2:] - 1) * t[:, None] ** (p[2:] - 2)
    return tp, d1, d2


def excitation_basis(t: np.ndarray, period: float, n_harm: int = 5):
    """Linear maps coefficients -> (q - q0, qd, qdd) including the quintic correction."""
    if period <= 0:
        raise BadInputError(f'period must be > 0, got {period}')
    wf = 2 * np.pi / period
    k = np.arange(1, n_harm + 1)

    def fourier(tt):
        wt = wf * np.outer(tt, k)
        s, c = np.sin(wt), np.cos(wt)
        f0 = np.hstack([s / (wf * k), -c / (wf * k)])
        f1 = np.hstack([c, s])
        f2 = np.hstack([-s * wf * k, c * wf * k])
        return f0, f1, f2
    ends = np.array([0.0, period])
    e0, e1, e2 = fourier(ends)
    p0, p1, p2 = _quintic_rows(ends)
    amat = np.vstack([p0, p1, p2])  # 6 x 6: value/vel/acc at both ends
    rhs = -np.vstack([e0, e1, e2])  # 6 x 2n
    poly = np.linalg.solve(amat, rhs)  # 6 x 2n quintic coefficients per Fourier coefficient
    f0, f1, f2 = fourier(t)
    t0, t1, t2 = _quintic_rows(t)
    return f0 + t0 @ poly, f1 + t1 @ poly, f2 + t2 @ poly


@dataclass
class ExcitationLimits:
    """Limits the excitation must respect.

    Attributes:
        q_low, q_high: Position limits [rad], (nj,).
        qd_max: Speed limits [rad/s], (nj,).
        qdd_max: Acceleration limits [rad/s^2], (nj,).
    """

    q_low: np.ndarray
    q_high: np.ndarray
    qd_max: np.ndarray
    qdd_max: np.ndarray


@dataclass
class ExcitationResult:
    """Optimised excitation.

    Attributes:
        excitation: The trajectory.
        cond: Condition number of the base regressor on the optimisation grid.
        iterations: Optimiser iterations.
        message: Optimiser message.
    """

    excitation: FourierExcitation
    cond: float
    iterations: int
    message: str


def _constraint_matrix(period, n_harm, nj, limits: ExcitationLimits, q0, n_grid):
    t = np.linspace(0, period, n_grid)
    g0, g1, g2 = excitation_basis(t, period, n_harm)
    rows, ub = [], []
    for j in range(nj):
        cols = slice(j * 2 * n_harm, (j + 1) * 2 * n_harm)
        for g, up, lo in ((g0, limits.q_high[j] - q0[j], q0[j] - limits.q_low[j]),
                          (g1, limits.qd_max[j], limits.qd_max[j]),
                          (g2, limits.qdd_max[j], limits.qdd_max[j])):
            m = np.zeros((len(t), nj * 2 * n_harm))
            m[:, cols] = g
            rows += [m, -m]
            ub += [np.full(len(t), up), np.full(len(t), lo)]
    return np.vstack(rows), np.concatenate(ub)


def scale_into_limits(x: np.ndarray, a: np.ndarray, ub: np.ndarray) -> np.ndarray:
    """Largest multiple ``s x`` with ``A (s x) <= ub`` (limits are linear in x)."""
    ax = a @ x
    pos = ax > 1e-15
    if not np.any(pos):
        return x
    return x * float(np.min(ub[pos] / ax[pos]))


def optimise_excitation(cond_of: Callable[[FourierExcitation], float], nj: int, period: float,
                        limits: ExcitationLimits, q0: Optional[Sequence[float]] = None,
                        n_harm: int = 5, n_grid: int = 200, seed: int = 0, starts: int = 3,
                        maxiter: int = 150) -> ExcitationResult:
    """Minimise ``cond_of(excitation)`` under linear position/speed/acceleration limits.

    Args:
        cond_of: Condition number of the base regressor along an excitation.
        nj: Joints.
        period: Base period [s].
        limits: The limits.
        q0: Centre positions [rad] (default: middle of the position limits).
        n_harm: Harmonics (5 in both papers).
        n_grid: Time samples on which the limits are enforced.
        seed, starts: Random initial points; the best converged start is kept.
        maxiter: SLSQP iterations per start.

    Raises:
        InfeasibleProblemError: ``q0`` outside the limits.
        SolverError: No start converged (carries the best last iterate).
    """
    q0 = 0.5 * (limits.q_low + limits.q_high) if q0 is None else np.asarray(q0, float)
    if np.any(q0 <= limits.q_low) or np.any(q0 >= limits.q_high):
        raise InfeasibleProblemError('excitation centre outside the position limits',
                                     f'q0={q0}, limits {limits.q_low}..{limits.q_high}')
    a, ub = _constraint_matrix(period, n_harm, nj, limits, q0, n_grid)
    rng = np.random.default_rng(seed)

    def make(x):
        return FourierExcitation(period, q0, x.reshape(nj, 2 * n_harm))

    def objective(x):
        c = cond_of(make(x))
        return float(np.log(c)) if np.isfinite(c) else 1e3

    best, last = None, None
    for _ in range(starts):
        x0 = 0.9 * scale_into_limits(rng.normal(size=nj * 2 * n_harm), a, ub)
        res = minimize(objective, x0, method='SLSQP',
                       constraints=[{'type': 'ineq', 'fun': lambda x: ub - a @ x,
                                     'jac': lambda x: -a}],
                       options={'maxiter': maxiter, 'ftol': 1e-5})
        last = res
        feasible = np.all(a @ res.x <= ub + 1e-6)
        if (res.success or res.status == 8) and feasible:  # 8: line search stall at optimum
            if best is None or res.fun < best.fun:
                best = res
    if best is None:
        raise SolverError('excitation optimisation did not converge from any start',
                          status=str(last.message), iterations=int(last.nit),
                          last_state=last.x.reshape(nj, 2 * n_harm))
    return ExcitationResult(make(best.x), float(np.exp(best.fun)), int(best.nit),
                            str(best.message))


def random_excitation(nj: int, period: float, limits: ExcitationLimits,
                      q0: Optional[Sequence[float]] = None, n_harm: int = 5,
                      n_grid: int = 200, seed: int = 0) -> FourierExcitation:
    """Random coefficients scaled to the largest amplitude the same limits allow."""
    q0 = 0.5 * (limits.q_low + limits.q_high) if q0 is None else np.asarray(q0, float)
    a, ub = _constraint_matrix(period, n_harm, nj, limits, q0, n_grid)
    x = scale_into_limits(np.random.default_rng(seed).normal(size=nj * 2 * n_harm), a, ub)
    return FourierExcitation(period, q0, x.reshape(nj, 2 * n_harm))
