"""Fitting friction models to (velocity, friction torque) points.

Linear models: weighted least squares on their regressor. Stribeck velocity and the
exponential-viscous exponent: bounded scalar search (scipy) with the linear part solved inside
(variable projection). The piecewise model of Xiao, Qian & Luo 2025: particle swarm (pyswarms) for
the nonlinear low-speed branch, equality-constrained weighted LS for the high-speed branch so the
two meet at ``v_th``, then a bounded LS polish of both branches with the meeting held exactly;
``v_th`` itself is chosen among the gaps between measured speeds. The swarm's cost is evaluated
for all particles at once and the polishes use analytic Jacobians (no finite differences).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import pyswarms
import scipy.linalg
from scipy.optimize import least_squares, minimize_scalar

from legid_ros.core.errors import BadInputError, SolverError
from legid_ros.core.friction.models import (DEFAULT_K_V, AsymmetricCoulombViscous,
                                            CoulombViscous, ExponentialViscous, FrictionModel,
                                            Piecewise, Stribeck, smooth_sign)

MODEL_ORDER = ('coulomb_viscous', 'asym_coulomb_viscous', 'stribeck', 'exp_viscous',
               'piecewise')


@dataclass
class FrictionFit:
    """A fitted model and its fit quality on the fitted points.

    Attributes:
        model: The fitted model.
        mse: Mean squared error [N.m^2].
        n_points: Points used.
        info: Optimiser facts (cost history length, chosen v_th, ...).
    """

    model: FrictionModel
    mse: float
    n_points: int
    info: dict


def _prepare(v, tau, weights, mirror):
    v = np.asarray(v, float).ravel()
    tau = np.asarray(tau, float).ravel()
    w = np.ones_like(v) if weights is None else np.asarray(weights, float).ravel()
    if not v.size == tau.size == w.size:
        raise BadInputError('v, tau and weights must have the same length')
    ok = np.isfinite(v) & np.isfinite(tau) & np.isfinite(w)
    v, tau, w = v[ok], tau[ok], w[ok]
    if mirror:
        v, tau, w = np.r_[v, -v], np.r_[tau, -tau], np.r_[w, w]
    return v, tau, w


def _wls(phi: np.ndarray, tau: np.ndarray, w: np.ndarray) -> np.ndarray:
    sw = np.sqrt(w)
    a, y = phi * sw[:, None], tau * sw
    try:  # normal equations: cheap and thread-free for these small systems
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(a.T @ a), a.T @ y)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(a, y, rcond=None)[0]


def _mse(model, v, tau):
    return float(np.mean((model(v) - tau) ** 2))


def fit_linear(model: FrictionModel, v, tau, weights=None, mirror: bool = False) -> FrictionFit:
    """Weighted LS of a linear model's parameters (shape constants kept)."""
    v, tau, w = _prepare(v, tau, weights, mirror)
    phi = model.regressor(v)
    if v.size < phi.shape[1]:
        raise BadInputError(f'{v.size} points are too few for {phi.shape[1]} parameters')
    model.set_params(_wls(phi, tau, w))
    return FrictionFit(model, _mse(model, v, tau), int(v.size), {})


def _scalar_fit(model, attr, bounds, v, tau, w, log=False) -> dict:
    def cost(x):
        setattr(model, attr, float(np.exp(x) if log else x))
        theta = _wls(model.regressor(v), tau, w)
        return float(np.sum(w * (model.regressor(v) @ theta - tau) ** 2))
    lo, hi = (np.log(bounds[0]), np.log(bounds[1])) if log else bounds
    res = minimize_scalar(cost, bounds=(lo, hi), method='bounded',
                          options={'xatol': 1e-4, 'maxiter': 200})
    if not res.success:
        raise SolverError(f'scalar fit of {attr} did not converge: {res.message}',
                          status=str(res.status), iterations=int(res.nfev),
                          last_state=float(np.exp(res.x) if log else res.x))
    setattr(model, attr, float(np.exp(res.x) if log else res.x))
    model.set_params(_wls(model.regressor(v), tau, w))
    return {attr: getattr(model, attr), 'evaluations': int(res.nfev)}


def fit_stribeck(v, tau, weights=None, mirror: bool = False, k_v: float = DEFAULT_K_V,
                 v_s_bounds=(1e-3, 2.0)) -> FrictionFit:
    """Stribeck + viscous with the Stribeck velocity fitted [rad/s]."""
    v, tau, w = _prepare(v, tau, weights, mirror)
    model = Stribeck(k_v=k_v)
    info = _scalar_fit(model, 'v_s', v_s_bounds, v, tau, w, log=True)
    return FrictionFit(model, _mse(model, v, tau), int(v.size), info)


def fit_exponential(v, tau, weights=None, mirror: bool = False, k_v: float = DEFAULT_K_V,
                    delta_bounds=(0.1, 3.0)) -> FrictionFit:
    """Exponential-viscous law (Zhu & Zhang) with the exponent fitted."""
    v, tau, w = _prepare(v, tau, weights, mirror)
    model = ExponentialViscous(k_v=k_v)
    info = _scalar_fit(model, 'delta', delta_bounds, v, tau, w)
    return FrictionFit(model, _mse(model, v, tau), int(v.size), info)


def _low_box(model: Piecewise, tau):
    """Search box of the low branch's ``(f_sl, f_scl, v_sl, f_vl)``."""
    scale = max(float(np.max(np.abs(tau))), 1e-6)
    lo = np.array([0.0, -2 * scale, 1e-3, -5 * scale / model.v_th])
    hi = np.array([2 * scale, 2 * scale, model.v_th, 5 * scale / model.v_th])
    return lo, hi


def _low_rows(p: np.ndarray, av: np.ndarray, s: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Low branch of :class:`Piecewise` for parameter rows ``p`` (..., 4) at speeds ``v`` (n,).

    ``(f_sl, f_scl, v_sl, f_vl)`` per row, ``av = |v|`` and ``s = S(v)`` precomputed; the
    same arithmetic as :meth:`Piecewise.low`, broadcast over rows -> (..., n) [N.m].
    """
    p = np.asarray(p, float)
    f_sl, f_scl, v_sl, f_vl = (p[..., i:i + 1] for i in range(4))
    mag = f_sl + f_scl * (1 - np.exp(-av / np.maximum(v_sl, 1e-9)))
    return mag * s + f_vl * v


def _low_jac(p: np.ndarray, av: np.ndarray, s: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Derivatives of the low branch (n,) by ``(f_sl, f_scl, v_sl, f_vl)``: (n, 4)."""
    f_scl, v_sl = float(p[1]), max(float(p[2]), 1e-9)
    e = np.exp(-av / v_sl)
    return np.stack([s, (1 - e) * s, -f_scl * e * av / v_sl ** 2 * s, v], axis=-1)


def _pso_low(model: Piecewise, v, tau, w, n_particles, iters, seed):
    lo, hi = _low_box(model, tau)
    av, s = np.abs(v), smooth_sign(v, model.k_v)
    w_sum = np.sum(w)

    def cost(x):  # all particles at once: (n_particles, 4) -> (n_particles,)
        return np.sum(w * (_low_rows(x, av, s, v) - tau) ** 2, axis=1) / w_sum
    saved = np.random.get_state()
    np.random.seed(seed)  # pyswarms draws from numpy's global generator: seed, then restore
    try:
        opt = pyswarms.single.GlobalBestPSO(n_particles=n_particles, dimensions=4,
                                            options={'c1': 1.5, 'c2': 1.5, 'w': 0.7},
                                            bounds=(lo, hi))
        best, pos = opt.optimize(cost, iters=iters, verbose=False)
    finally:
        np.random.set_state(saved)
    hist = np.asarray(opt.cost_history, float)
    # local polish of the swarm's best point (bounded trust-region LS, analytic Jacobian)
    sw = np.sqrt(w / w_sum)

    def resid(p):
        return sw * (_low_rows(p, av, s, v) - tau)

    def jac(p):
        return sw[:, None] * _low_jac(p, av, s, v)
    x0 = np.clip(np.asarray(pos, float), lo + 1e-12, hi - 1e-12)
    res = least_squares(resid, x0, jac=jac, bounds=(lo, hi), xtol=1e-10, ftol=1e-12,
                        max_nfev=2000)
    if res.status <= 0 or not np.all(np.isfinite(res.x)):
        raise SolverError('low-speed branch fit did not converge: ' + str(res.message),
                          status=str(res.status), iterations=iters + int(res.nfev),
                          last_state=np.asarray(res.x))
    polished = float(np.sum(res.fun ** 2))
    if polished <= best:
        pos, best = res.x, polished
    model.f_sl, model.f_scl, model.v_sl, model.f_vl = (float(x) for x in pos)
    return float(best), len(hist)


def _high_constrained(model: Piecewise, v, tau, w):
    """Weighted LS of the high branch with ``high(v_th) = low(v_th)`` held exactly.

    Null-space form ``theta = c d / |c|^2 + N z``: the equality holds to round-off whatever
    the conditioning of the columns (``v^3 |v|`` dwarfs ``S`` at a few rad/s, and a KKT
    system solved by truncated least squares let the branches drift apart by 2 %).
    """
    phi = model.high_regressor(v)
    c = model.high_regressor(np.array([model.v_th]))[0]
    d = float(model.low(np.array([model.v_th]))[0])
    sw = np.sqrt(w)
    a = phi * sw[:, None]
    b = tau * sw
    theta_p = c * d / float(c @ c)
    null = scipy.linalg.null_space(c[None, :])
    z = np.linalg.lstsq(a @ null, b - a @ theta_p, rcond=None)[0]
    theta = theta_p + null @ z
    for n, x in zip(model.high_names, theta):
        setattr(model, n, float(x))


def _joint_polish(model: Piecewise, v, tau, w, box) -> None:
    """Both branches at once, continuity held by eliminating ``f_sh`` (bounded LS).

    The high branch alone, forced through the low branch's value at ``v_th``, bends to meet
    it; refitting the low branch's four parameters with it finds the best continuous pair.
    Kept only if it lowers the weighted error. Residuals and their analytic Jacobian are
    vectorised over the points.
    """
    k_v = model.k_v
    vt = np.array([model.v_th])
    avt, s_t = np.abs(vt), smooth_sign(vt, k_v)
    s_th = float(s_t[0])
    rest = ('f_vh', 'f1', 'f2', 'f3')
    av, s = np.abs(v), smooth_sign(v, k_v)
    below = (av < model.v_th)[:, None]
    h = model.high_regressor(v)  # (n, 5): [S, v, v|v|, v^3, v^3|v|]
    h_th = model.high_regressor(vt)[0]
    sw = np.sqrt(w / np.sum(w))

    def f_sh(p):
        return float(_low_rows(p[:4], avt, s_t, vt)[0] - h_th[1:] @ p[4:]) / s_th

    def resid(p):
        high = h[:, 0] * f_sh(p) + h[:, 1:] @ p[4:]
        return sw * (np.where(below[:, 0], _low_rows(p[:4], av, s, v), high) - tau)

    def jac(p):
        d_low = _low_jac(p[:4], avt, s_t, vt)[0] / s_th  # d f_sh / d low parameters
        d_rest = -h_th[1:] / s_th  # d f_sh / d (f_vh, f1, f2, f3)
        j_high = np.hstack([h[:, :1] * d_low, h[:, 1:] + h[:, :1] * d_rest])
        j_low = np.hstack([_low_jac(p[:4], av, s, v), np.zeros((v.size, 4))])
        return sw[:, None] * np.where(below, j_low, j_high)
    lo = np.r_[box[0], np.full(4, -np.inf)]
    hi = np.r_[box[1], np.full(4, np.inf)]
    x0 = np.r_[[model.f_sl, model.f_scl, model.v_sl, model.f_vl],
               [getattr(model, n) for n in rest]]
    x0[:4] = np.clip(x0[:4], box[0] + 1e-12, box[1] - 1e-12)
    start = float(np.sum(resid(x0) ** 2))
    res = least_squares(resid, x0, jac=jac, bounds=(lo, hi), xtol=1e-12, ftol=1e-12,
                        max_nfev=2000)
    if np.all(np.isfinite(res.x)) and float(np.sum(res.fun ** 2)) < start:
        model.f_sl, model.f_scl, model.v_sl, model.f_vl = (float(x) for x in res.x[:4])
        for n, x in zip(rest, res.x[4:]):
            setattr(model, n, float(x))
        model.f_sh = f_sh(res.x)


def fit_piecewise(v, tau, weights=None, mirror: bool = False, v_th: Optional[float] = None,
                  k_v: float = DEFAULT_K_V, n_particles: int = 40, iters: int = 150,
                  seed: int = 0,
                  candidates: Optional[Sequence[float]] = None) -> FrictionFit:
    """Piecewise model (Xiao et al. 2025): PSO on the low branch, constrained WLS on the high.

    Args:
        v, tau, weights: Points (speed [rad/s], friction [N.m]) and their weights.
        mirror: Add the odd mirror image ``(-v, -tau)``.
        v_th: Threshold [rad/s]; None picks, among gaps between measured speeds, the one
            with the lowest weighted error (each branch needs >= 4 / 5 distinct speeds).
        n_particles, iters, seed: Particle swarm settings.

    The swarm's best point is polished by bounded ``scipy.optimize.least_squares``; a polish
    that stops without converging raises SolverError carrying its last point.

    Raises:
        BadInputError: Too few distinct speeds for the two branches.
    """
    v, tau, w = _prepare(v, tau, weights, mirror)
    speeds = np.unique(np.round(np.abs(v), 9))
    if candidates is None and v_th is None:
        mids = 0.5 * (speeds[1:] + speeds[:-1])
        candidates = [m for m in mids
                      if np.sum(speeds < m) >= 4 and np.sum(speeds > m) >= 5]
    elif v_th is not None:
        candidates = [float(v_th)]
    if not candidates:
        raise BadInputError(f'{speeds.size} distinct speeds are too few for the piecewise model '
                            f'(needs >= 4 below and >= 5 above the threshold)')
    best = None
    for cand in candidates:
        model = Piecewise(v_th=float(cand), k_v=k_v)
        lowsel = np.abs(v) < cand
        highsel = ~lowsel
        if np.unique(np.abs(v[lowsel])).size < 4 or np.unique(np.abs(v[highsel])).size < 5:
            raise BadInputError(f'threshold {cand:.3g} rad/s leaves too few speeds per branch')
        lcost, nit = _pso_low(model, v[lowsel], tau[lowsel], w[lowsel], n_particles, iters,
                              seed)
        _high_constrained(model, v[highsel], tau[highsel], w[highsel])
        _joint_polish(model, v, tau, w, _low_box(model, tau[lowsel]))
        err = float(np.sum(w * (model(v) - tau) ** 2) / np.sum(w))
        if best is None or err < best[0]:
            best = (err, model, {'v_th': float(cand), 'pso_iterations': nit,
                                 'low_cost': lcost})
    _, model, info = best
    return FrictionFit(model, _mse(model, v, tau), int(v.size), info)


def fit_model(kind: str, v, tau, weights=None, mirror: bool = False, **kw) -> FrictionFit:
    """Fit a model by kind name (see ``MODEL_ORDER``)."""
    if kind == 'coulomb_viscous':
        return fit_linear(CoulombViscous(**kw), v, tau, weights, mirror)
    if kind == 'asym_coulomb_viscous':
        return fit_linear(AsymmetricCoulombViscous(**kw), v, tau, weights, mirror)
    if kind == 'stribeck':
        return fit_stribeck(v, tau, weights, mirror, **kw)
    if kind == 'exp_viscous':
        return fit_exponential(v, tau, weights, mirror, **kw)
    if kind == 'piecewise':
        return fit_piecewise(v, tau, weights, mirror, **kw)
    raise BadInputError(f'unknown friction model {kind!r}; known: {list(MODEL_ORDER)}')
