"""What the residual does not show: the parts of an estimate's error beyond its noise.

Used by :mod:`legid_ros.core.identification.uncertainty`:

- :func:`effective_samples`: independent samples of a filtered series (its autocorrelation);
- :func:`held_basis`: the standard parameters a set holds at CAD (inertias about each COM, what
  the set cannot represent), whose difference from the truth moves the fit;
- :func:`core_readout`: how a core reads a standard vector (the truth's core value moves with
  the held parameters too);
- :func:`model_error_ratio`: how much larger than the residual's noise the error that follows
  the motion is, from how far the estimate moved from CAD along every combination;
- :func:`moved_too_far`: model error shown by an estimate that moved from CAD along a poorly
  determined combination further than the prior width and its spread allow.
"""

from __future__ import annotations

import numpy as np

from legid_ros.core.identification.parameters.sets import GroupedSet, ReducedSet, StandardSet
from legid_ros.core.inertial import PARAMS_PER_LINK
from legid_ros.core.robot import Robot


def effective_samples(x: np.ndarray) -> float:
    """Independent samples in a series: ``n / tau`` with ``tau = 1 + 2 sum rho_k`` over the
    lags before its autocorrelation first drops below zero (filtered samples share noise)."""
    x = np.asarray(x, float) - np.mean(x)
    n = x.size
    if n < 3 or not np.any(x):
        return float(max(n, 1))
    f = np.fft.rfft(x, 2 * n)
    ac = np.fft.irfft(f * np.conj(f))[:n]
    ac = ac / ac[0]
    neg = np.flatnonzero(ac < 0)
    stop = int(neg[0]) if neg.size else n
    tau = max(1.0, 1.0 + 2.0 * float(ac[1:stop].sum()))
    return float(n / tau)


def core_readout(robot: Robot, pi: np.ndarray, core: str, scales: np.ndarray) -> np.ndarray:
    """(q, P) ``d x_scaled / d pi``: how the core reads a standard vector (the truth's core
    value moves with the parameters the set holds; central differences, linear maps exact)."""
    pi = np.asarray(pi, float)
    if core == 'standard':
        return np.eye(pi.size) / scales[:, None]
    if not robot.link_groups or core == 'links':
        cols = [i for i in range(pi.size) if i % PARAMS_PER_LINK < 4]
        out = np.zeros((len(cols), pi.size))
        out[np.arange(len(cols)), cols] = 1.0
        return out / scales[:, None]
    basis = GroupedSet(robot, pi_cad=pi, per_side=core == 'grouped_sides') \
        if core in ('grouped', 'grouped_sides') else ReducedSet(robot, pi_cad=pi)
    step = 1e-6 * StandardSet(robot, pi).scales()
    # sets without inertia read only the masses and first moments: the other columns are 0
    inertia = bool(getattr(basis, 'identify_inertia', False))
    out = np.zeros((basis.from_standard(pi).size, pi.size))
    for k in range(pi.size):
        if k % PARAMS_PER_LINK >= 4 and not inertia:
            continue
        d = np.zeros(pi.size)
        d[k] = step[k]
        out[:, k] = (basis.from_standard(pi + d) - basis.from_standard(pi - d)) / (2 * step[k])
    return out / scales[:, None]


def model_error_ratio(meat: np.ndarray, vec: np.ndarray, lam: np.ndarray, det: np.ndarray,
                      move: np.ndarray, width: float, poor_spread: float, prior: float = 0.0,
                      least_shrink: float = 0.1, held: np.ndarray = None) -> float:
    """Variance of the model error's pull on the estimate over that of the noise, ``kappa``.

    Model error that follows the motion (soft contacts, the base pose from kinematics, a
    filter's lag) pulls the fit as noise does, but the fit absorbs what of it the regressors
    can explain, so the residual's score covariance ``meat`` does not show it. It shows in the
    moves from CAD: along combination ``i`` (information ``lam_i``, noise variance ``v_i`` of
    the data-only estimate, shrink ``s_i = lam_i / (lam_i + prior)`` by the prior) the move
    ``m_i`` is ``s_i`` times the truth's offset from CAD (variance ``a``, the same along every
    combination, at least the prior's ``width^2``), the noise and the model error (variance
    ``kappa v_i``): ``m_i ~ N(0, s_i^2 (a + (1 + kappa) v_i))``. ``a`` and ``kappa`` are the
    maximum-likelihood pair over the poorly determined combinations (``v_i`` above
    ``poor_spread^2``: there the truth's offset cannot hide the model error) that the prior
    does not hold (``s_i`` at least ``least_shrink``): moves that do not grow with ``v_i`` are
    the truth's offset, moves that do are the model error's. One ``kappa`` per run, seen where
    the data determine little and applied to every combination (the model error does not
    choose the directions the data determine). Where both explain the moves alike (a single
    combination: the likelihood is flat along ``a + kappa v``), the grids' points decide where
    on that ridge the pair falls (a known weakness: the least ``kappa`` there was tried and
    called a combination with 10 % errors determined, docs/identification.md).

    Args:
        meat: (k, k) score covariance of the noise in the plane.
        vec, lam, det: Eigen-decomposition of the information in the plane; which are seen.
        move: (k,) estimate minus CAD in the plane [core-scale units].
        width: Prior width [core-scale units] (the least offset of the truth from CAD).
        poor_spread: Data-only std above which a combination is poorly determined [core-scale
            units].
        prior: The estimator's prior weight (as ``lam``); 0: none.
        least_shrink: Combinations shrunk more than this by the prior are left out (the prior
            holds them; bounds and the fit's nonlinearity decide their small moves).
        held: (k,) variance of the data-only estimate's response to what the set holds at CAD
            along each combination [core-scale units^2] (:func:`held_basis`; None: 0): moves
            it explains are not model error (a set that cannot represent the truth moves
            along its poorly determined combinations by the held parameters' pull, and that
            pull has its own term: read as ``kappa`` it widened every combination, the
            well-determined whole-body COM of Talos's reduced set 11x).

    Returns:
        ``kappa`` >= 0 (0: the moves are what the truth's offset and the noise explain).
    """
    m = vec.T @ move
    lam_safe = np.where(det, lam, 1.0)
    v = np.diag(vec.T @ meat @ vec) / lam_safe ** 2
    s = lam_safe / (lam_safe + max(float(prior), 0.0))
    use = det & (s >= least_shrink) & (v > poor_spread ** 2)
    if not np.any(use):
        return 0.0
    h = np.zeros(m.size) if held is None else np.asarray(held, float)
    u, v, h = (m[use] / s[use]) ** 2, v[use], h[use]  # data-only moves, noise, held variance
    a = (width ** 2 * np.logspace(0, 4, 81))[:, None, None]
    k = np.concatenate([[0.0], np.logspace(-3, 8, 221)])[None, :, None]
    var = a + (1.0 + k) * v[None, None, :] + h[None, None, :]
    nll = np.sum(np.log(var) + u[None, None, :] / var, axis=2)
    if not np.all(np.isfinite(nll)):  # non-finite moves: nothing to read model error from
        return 0.0
    return float(k.ravel()[np.unravel_index(int(np.argmin(nll)), nll.shape)[1]])


def moved_too_far(meat: np.ndarray, vec: np.ndarray, lam: np.ndarray, det: np.ndarray,
                   move: np.ndarray, width: float, poor_spread: float,
                   held: np.ndarray = None) -> np.ndarray:
    """The score covariance ``meat`` inflated along the poorly determined combinations where
    the estimate moved from CAD further than the prior width allows.

    Along combination ``i`` (std ``s_i`` from the data, above ``poor_spread``), the data-only
    estimate differs from CAD by the truth's offset (std ``width``) plus its own error (std
    ``s_i``): a move beyond two of their joint std, ``m_i^2 > 4 (width^2 + s_i^2)``, says the
    error is larger than the residual shows (model error that follows the motion: soft
    contacts, a sole's compliance), and the std there becomes ``sqrt(m_i^2 - width^2)``. (At
    one joint std a third of the combinations would widen by the truth's offset alone: on
    Solo12's reduced set in MuJoCo that made the whole-body COM's std 2.0x its error over 8
    seeds, 1.6x at two.) Well-determined combinations are left alone (there a move is the
    truth's offset from CAD).

    Args:
        meat: (k, k) score covariance in the plane.
        vec, lam, det: Eigen-decomposition of the information in the plane; which are seen.
        move: (k,) estimate minus CAD in the plane [core-scale units].
        width: Prior width [core-scale units].
        poor_spread: Std above which a combination is poorly determined.
        held: (k,) variance of the response to what the set holds at CAD along each
            combination [core-scale units^2] (as :func:`model_error_ratio`; None: 0): part of
            the joint std a move is compared with.
    """
    m = vec.T @ move
    me = vec.T @ meat @ vec
    var = np.where(det, np.diag(me) / np.where(det, lam, 1.0) ** 2, np.inf)
    h = np.zeros(lam.size) if held is None else np.asarray(held, float)
    k = np.ones(lam.size)
    poor = det & (var > poor_spread ** 2) & (m ** 2 > 4.0 * (width ** 2 + var + h))
    k[poor] = np.maximum(m[poor] ** 2 - width ** 2 - h[poor], var[poor]) / var[poor]
    d = np.sqrt(k)
    return vec @ (me * np.outer(d, d)) @ vec.T


def held_basis(robot: Robot, pi: np.ndarray, jac: np.ndarray) -> np.ndarray:
    """(P, P) standard-parameter change per prior-width unit of what the set holds at CAD.

    A set holds part of the standard parameters at CAD (inertias about each COM, the split of a
    group between its links): the truth differs there too, and that difference moves the fit
    as any other error. Columns: the masses and first moments outside the range of the core's
    ``d pi / d x`` (in :meth:`StandardSet.scales` units), and every inertia entry.
    """
    s_std = StandardSet(robot, np.asarray(pi, float)).scales()
    n = s_std.size
    mh = np.flatnonzero(np.arange(n) % PARAMS_PER_LINK < 4)
    q, sv, _ = np.linalg.svd(jac[mh] / s_std[mh, None], full_matrices=False)
    q = q[:, sv > 1e-9 * max(sv.max(initial=0.0), 1e-300)]
    comp = np.zeros((n, n))
    # masses and first moments: what the set cannot represent (e.g. a group's split)
    comp[np.ix_(mh, mh)] = np.eye(mh.size) - q @ q.T
    rot = np.setdiff1d(np.arange(n), mh)
    comp[rot, rot] = 1.0  # inertias about the COM, held at CAD
    return s_std[:, None] * comp


def offset_width(move: np.ndarray, comb_std: np.ndarray, shrink: np.ndarray, width: float,
                 floor: float = 0.5, least_shrink: float = 0.1) -> float:
    """How far the truth is from CAD [core-scale units], as the data show it (an
    empirical-Bayes estimate of the prior's width).

    Along combination ``i`` the data-only estimate's move from CAD, ``m_i / s_i`` (the
    estimator's move undone of the prior's shrink ``s_i``), is the truth's offset (variance
    ``a``, the same along every combination) plus noise of variance ``sigma_i^2`` (its
    data-only std, model error included): ``a`` is the maximum-likelihood value of
    ``m_i / s_i ~ N(0, a + sigma_i^2)`` over the combinations the data see and the prior does
    not hold (the well-determined ones decide it, the others barely weigh). The prior pulls
    the estimate toward CAD along what the data do not determine by that offset, not by the
    width it allows (it never widens the prior: a CAD further off than the prior allows is model
    error to :func:`moved_too_far`).

    Args:
        move: (k,) the estimate's move from CAD along each combination [core-scale units].
        comb_std: (k,) data-only std of each combination (``inf``: not seen).
        shrink: (k,) ``lam / (lam + prior)`` per combination (1 without a prior).
        width: The prior width [core-scale units]: the most this returns.
        floor: Least result [``width`` units]: a few combinations near CAD by chance do not
            make CAD exact.
        least_shrink: Combinations the prior shrinks more than this are left out (their small
            moves are the prior's and the bounds', not the data's).
    """
    use = np.isfinite(comb_std) & (shrink >= least_shrink)
    if not np.any(use):
        return float(width)
    u = (move[use] / shrink[use]) ** 2
    v = comb_std[use] ** 2
    a = (width * np.linspace(floor, 1.0, 51)) ** 2
    nll = np.sum(np.log(a[:, None] + v[None, :]) + u[None, :] / (a[:, None] + v[None, :]),
                 axis=1)
    return float(np.sqrt(a[int(np.argmin(nll))]))
