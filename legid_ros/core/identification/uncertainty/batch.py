"""The batch form: the sandwich over blocks of samples from the rows' residual and Jacobian,
with the prior's pull, what the set holds at CAD and the model error the residual does not show
(:mod:`legid_ros.core.identification.uncertainty`)."""

from __future__ import annotations

from typing import Dict, Sequence, Union

import numpy as np
import scipy.linalg as sla

from legid_ros.core.identification.identifiability import describe
from legid_ros.core.identification.model_error import effective_samples, held_basis
from legid_ros.core.identification.uncertainty.core import (DEFAULT_BLOCKS, POOR_SPREAD,
                                                            PRIOR_WIDTH, SPLIT_WIDTH,
                                                            UNMODELLED_WIDTH, held_widths,
                                                            _cad_move, _core_basis, _finish,
                                                            _held_sensitivity, _mass_plane,
                                                            _plane_covariances, _stds,
                                                            held_variance)
from legid_ros.core.identification.uncertainty.result import Uncertainty, total_std
from legid_ros.core.robot import Robot


def _block_meat(gz: np.ndarray, r: np.ndarray, edges: np.ndarray, bread: np.ndarray,
                vec: np.ndarray, lam: np.ndarray, det: np.ndarray, dim: int) -> np.ndarray:
    """Score covariance of the rows over contiguous blocks (the sandwich's meat), with the
    cluster-robust small-sample factor ``nb / (nb - 1)``.

    With no more blocks than ``dim`` directions (every standard parameter of a filtered 1 kHz
    run) the blocks' covariance has no rank along most of them: the information ``bread`` times the
    blocks' mean inflation, ``tr(B^-1 M) / dim`` over the seen directions (unbiased when
    ``M ~ kappa B``), the white-row form scaled by what the blocks measure.

    Args:
        gz: (m, k) rows' columns.
        r: (m,) rows' residual.
        edges: Row index of each block's start, and the end.
        bread, vec, lam, det: ``gz^T gz``, its eigen-decomposition and the seen directions.
        dim: Directions the blocks must outnumber (the plane's, or the seen ones).
    """
    score = np.array([gz[a:b].T @ r[a:b] for a, b in zip(edges[:-1], edges[1:])])
    nb = len(score)
    meat = score.T @ score * (nb / max(nb - 1.0, 1.0))
    if nb <= dim and det.any():
        ratio = np.einsum('ij,ij->j', vec[:, det], meat @ vec[:, det]) / lam[det]
        meat = float(ratio.mean()) * bread
    return meat


def _data_information(inv: np.ndarray, meat_seen: np.ndarray) -> np.ndarray:
    """Information of the data-only estimate: the pseudo-inverse of its sandwich covariance
    ``inv M inv^T`` (``inv``: the seen eigenvectors over their eigenvalues; ``M`` along them),
    none along what the data do not see."""
    cov = inv @ meat_seen @ inv.T
    return np.linalg.pinv(0.5 * (cov + cov.T), hermitian=True, rcond=1e-12)


def _held_units_posterior(u: np.ndarray, gz: np.ndarray, r: np.ndarray, edges: np.ndarray,
                          widths: np.ndarray) -> np.ndarray:
    """(P, P) second moment of the truth's offset in what the set holds at CAD
    (:func:`model_error.held_basis` units: a group's split, the inertias), given the data:
    the posterior covariance with ``widths`` as the prior plus its mean's outer product.

    The data see part of what a set holds (a sensor box on one leg moves the whole-body COM
    sideways; a symmetric grouped set cannot follow it): there the posterior is narrow and its
    mean the offset the data show, which the estimate, holding CAD, carries as a bias; what they
    do not see keeps its prior width. The data-only estimate of the held units is the rows'
    residual on their columns with the plane's projected out, its covariance the sandwich over
    the same blocks (the information times their mean inflation where the blocks are fewer
    than the units).

    Args:
        u: (m, P) rows per held unit.
        gz: (m, k) rows' Jacobian in the plane.
        r: (m,) rows' residual of the data-only fit in the plane.
        edges: Row index of each block's start, and the end.
        widths: (P,) prior width of each unit (:func:`core.held_widths`).
    """
    p = u.shape[1]
    out = np.zeros((p, p))
    cols = np.flatnonzero(np.asarray(widths) > 0)
    if not cols.size:
        return out
    uu = u[:, cols] - gz @ np.linalg.lstsq(gz, u[:, cols], rcond=1e-10)[0]
    bread = uu.T @ uu
    lam, vec = np.linalg.eigh(0.5 * (bread + bread.T))
    det = lam > 1e-9 * max(lam[-1], 1e-300)
    if not det.any():  # nothing seen: the widths
        out[cols, cols] = np.asarray(widths, float)[cols] ** 2
        return out
    inv = vec[:, det] / lam[det]
    meat = _block_meat(uu, r, edges, bread, vec, lam, det, int(det.sum()))
    information = _data_information(inv, vec[:, det].T @ meat @ vec[:, det])
    estimate = inv @ (vec[:, det].T @ (uu.T @ r))
    post = np.linalg.inv(information + np.diag(1.0 / np.asarray(widths, float)[cols] ** 2))
    mean = post @ (information @ estimate)
    out[np.ix_(cols, cols)] = post + np.outer(mean, mean)
    return out


def _held_posterior(g: np.ndarray, r: np.ndarray, edges: np.ndarray, mass_row: np.ndarray,
                    hard: Sequence[int], soft: Sequence[int], sd: np.ndarray,
                    width: float) -> np.ndarray:
    """Covariance of the truth's offset from the values the set holds with a width
    [core-scale units^2], (len(soft), len(soft)): that width (a foot weighed by its F/T, an
    auto set's unit held at CAD +- the prior width) narrowed by what the data say of those
    parameters, every other core parameter free within the prior width (the posterior of the
    sandwich's information and the widths). An auto set holds what its test found the data do
    not need, not what the data do not see: on the biped in MuJoCo the widths alone made the
    trunk COM's std 10x its error over 8 seeds.

    Args:
        g: (m, q) rows' Jacobian in core-scale units.
        r: (m,) rows' residual at the estimate.
        edges: Row index of each block's start, and the end.
        mass_row: (q,) the total-mass row in core-scale units (:func:`_mass_plane`).
        hard: Core indices held exactly (weighed without error, known).
        soft: Core indices held with a width.
        sd: (len(soft),) their widths [core-scale units].
        width: The prior width of the others [core-scale units]; 0: the widths as they are.
    """
    sd = np.asarray(sd, float)
    if not width > 0:
        return np.diag(sd ** 2)
    q = g.shape[1]
    zf = sla.null_space(np.vstack([mass_row] + ([np.eye(q)[list(hard)]] if hard else [])))
    gz = g @ zf
    bread = gz.T @ gz
    lam, vec = np.linalg.eigh(0.5 * (bread + bread.T))
    det = lam > 1e-10 * max(lam[-1], 1e-300)
    meat = _block_meat(gz, r, edges, bread, vec, lam, det, zf.shape[1])
    information = _data_information(vec[:, det] / lam[det], vec[:, det].T @ meat @ vec[:, det])
    precision = np.full(q, 1.0 / width ** 2)
    precision[list(soft)] = 1.0 / sd ** 2
    post = np.linalg.inv(information + zf.T @ (precision[:, None] * zf))
    full = zf @ post @ zf.T
    return full[np.ix_(list(soft), list(soft))]


def core_uncertainty(robot: Robot, pi: np.ndarray, jac_pi: np.ndarray, resid: np.ndarray,
                     n_samples: int, held: Union[Sequence[str], Dict[str, float]] = (),
                     nuisance: np.ndarray = None,
                     n_blocks: int = DEFAULT_BLOCKS, poor_spread: float = POOR_SPREAD,
                     prior: float = 0.0, core: str = 'reduced',
                     prior_width: float = PRIOR_WIDTH,
                     unmodelled_width: float = None, pi_cad: np.ndarray = None) -> Uncertainty:
    """Covariance of the core from the rows' residual and Jacobian, the prior included.

    In the plane the data must decide (this package): the noise and motion (the
    sandwich over blocks, shrunk by the prior; widened where the estimate moved from CAD too
    far for it, :func:`model_error.moved_too_far`, by what neither the truth's offset nor the
    held parameters' pull explains), the prior's pull toward CAD (the truth is
    within ``prior_width`` scale units of CAD, by the offset the data show:
    ``(B + P)^-1 P W P (B + P)^-1``), and the
    parameters the set holds at CAD (:func:`model_error.held_basis`: the inertias at
    ``UNMODELLED_WIDTH``, a group's split at ``SPLIT_WIDTH`` of that width, narrowed by what the
    data say of them, :func:`_held_units_posterior`). Along a combination the data alone do
    not determine (std above :data:`DETERMINED_RATIO` x ``prior_width``) the std is at least
    the posterior of the data and the prior, and at least ``prior_width`` where the data do
    not narrow it (held at CAD +- that width; :func:`core._least_variance`).

    Args:
        robot: Robot (defines the core).
        pi: Identified standard parameters.
        jac_pi: (m, P) derivative of the (whitened) row residuals with respect to ``pi``; rows
            ordered by sample, ``m / n_samples`` per sample.
        resid: (m,) (whitened) row residuals at the estimate.
        n_samples: Samples behind the rows.
        held: Core parameter names held fixed (std 0), or name -> standard deviation of the
            value they are held at (measured otherwise, e.g. a foot weighed by its ankle F/T):
            that measurement's information joins the data's.
        nuisance: (m, k) columns fitted alongside (e.g. friction), projected out.
        n_blocks: Least number of contiguous sample blocks of the score covariance (at least
            3 per parameter of the plane, each at least twice the residual's correlation).
        poor_spread: Largest std of an identifiable combination [core-scale units].
        prior: The estimator's prior weight on the core, in the rows' units per squared
            core-scale unit (ZMP Newton: ``N reg``; linear rows: ``N reg`` on whitened rows);
            0: none (the estimate along what the data do not see is then not determined).
        core: The core parameter set (:func:`_core_basis`): the set the method fitted.
        prior_width: How far the truth may be from CAD [core-scale units] (the sets' scales
            are their prior spreads: 20 % of a mass, 2 cm of COM); 0: the prior's bias and
            the held parameters not counted.
        unmodelled_width: Width of the held parameters [scale units of the standard set]
            (default ``UNMODELLED_WIDTH`` x ``prior_width``).
        pi_cad: CAD parameters (default: the robot model's): along a poorly determined
            combination, an estimate further from CAD than the prior width and its spread
            allow carries model error the residual does not show
            (:func:`model_error.moved_too_far`).
    """
    value, scales, jac, c, names = _core_basis(robot, np.asarray(pi, float), core)
    g = np.asarray(jac_pi, float) @ jac
    r = np.asarray(resid, float).copy()
    nq = None
    if nuisance is not None and nuisance.size:
        nq, _ = np.linalg.qr(nuisance)
        g -= nq @ (nq.T @ g)
        r -= nq @ (nq.T @ r)
    held_std = dict(held) if isinstance(held, dict) else {h: 0.0 for h in held}
    fixed = [names.index(h) for h in held_std if h in names]
    rows = np.vstack([_mass_plane(c, scales)] + ([np.eye(len(names))[fixed]] if fixed else []))
    z = sla.null_space(rows)
    gz = g @ z
    # the residual of the data-only fit: a prior or bounds hold some directions away from the
    # data's optimum, and that offset is no noise (it would leak into the block scores)
    r = r - gz @ np.linalg.lstsq(gz, r, rcond=1e-10)[0]
    bread = gz.T @ gz
    lam, vec = np.linalg.eigh(0.5 * (bread + bread.T))
    det = lam > 1e-10 * max(lam[-1], 1e-300)
    per = max(1, len(r) // max(n_samples, 1))
    # blocks: more than the plane's parameters (a score covariance from fewer blocks than
    # parameters is rank-deficient and low), each longer than twice the residual's
    # correlation (effective_samples)
    tau = max(len(r) / per / effective_samples(r.reshape(-1, per)[:, k])
              for k in range(per)) if len(r) == per * n_samples else 1.0
    want = max(n_blocks, 3 * z.shape[1])
    nb = int(max(2, min(want, n_samples // max(2.0 * tau, 2.0))))
    edges = np.linspace(0, n_samples, nb + 1).astype(int) * per
    meat = _block_meat(gz, r, edges, bread, vec, lam, det, z.shape[1])
    width = float(prior_width)
    move = _cad_move(robot, pi_cad, core, value, scales, z) if width > 0 else None
    # the data alone, then the estimator's own error: the noise through its prior, the
    # prior's bias (and below, what the set holds at CAD)
    held_width = UNMODELLED_WIDTH * width if unmodelled_width is None else unmodelled_width
    held_score = held_var = held_cov = None
    if held_width > 0:
        u = np.asarray(jac_pi, float) @ held_basis(robot, pi, jac)
        if nq is not None:
            u -= nq @ (nq.T @ u)
        held_score = gz.T @ u
        held_var = held_variance(held_score, vec, lam, det, held_width)
        held_cov = _held_units_posterior(
            u, gz, r, edges, held_widths(robot, pi, held_width, SPLIT_WIDTH * width))
    cov_data, comb_std, cov_z, noise_z, gain = _plane_covariances(
        meat, vec, lam, det, move, width, poor_spread, prior, held=held_var)
    response = gain @ held_score if held_score is not None else None
    cov_scaled, cov_pi = _finish(robot, pi, core, jac, scales, z, vec, cov_z, comb_std, width,
                                 held_width, response, held_cov)
    noise_scaled = z @ noise_z @ z.T
    soft = [names.index(h) for h, sd in held_std.items() if h in names and sd > 0]
    if soft:  # a held value's own error moves the rest of the estimate
        sens = np.column_stack([_held_sensitivity(i, c * scales, g, z, vec, lam + prior,
                                                  det | (prior > 0)) for i in soft])
        hard = [names.index(h) for h, sd in held_std.items() if h in names and not sd > 0]
        sd = np.array([held_std[names[i]] / scales[i] for i in soft])
        held_cov = _held_posterior(g, r, edges, _mass_plane(c, scales), hard, soft, sd, width)
        moved = sens @ held_cov @ sens.T
        cov_scaled = cov_scaled + moved
        noise_scaled = noise_scaled + moved
        cov_pi = cov_pi + jac @ moved @ jac.T
    std, std_data = _stds(cov_scaled, cov_data, z, vec, det, scales, prior)
    for h, sd in held_std.items():
        if h in names:
            std_data[names.index(h)] = sd
            if not sd > 0:
                std[names.index(h)] = 0.0
    vectors = (z @ vec).T
    pull_std = np.sqrt(held_var) if held_var is not None else np.zeros(comb_std.size)
    return Uncertainty(names, value, std, scales, cov_scaled * np.outer(scales, scales),
                       [describe(v, names) for v in vectors], vectors, comb_std,
                       total_std(comb_std, pull_std) <= poor_spread, nb, std_data, float(prior),
                       jacobian=jac / scales[None, :], prior_width=width,
                       covariance_data=z @ cov_data @ z.T, covariance_pi=cov_pi,
                       covariance_noise=noise_scaled * np.outer(scales, scales),
                       combination_held_std=pull_std)
