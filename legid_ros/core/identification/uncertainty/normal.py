"""The sufficient-statistics form (the online estimator): Zhu & Zhang's white-residual
``s^2 (A^T A)^-1`` on the core, with the prior's pull and what the set holds at CAD as the batch
form counts them (:mod:`legid_ros.core.identification.uncertainty`)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.linalg as sla

from legid_ros.core.identification.identifiability import describe
from legid_ros.core.identification.model_error import held_basis
from legid_ros.core.identification.uncertainty.core import (POOR_SPREAD, PRIOR_WIDTH,
                                                            UNMODELLED_WIDTH, _cad_move,
                                                            _core_basis, _finish, _mass_plane,
                                                            _plane_covariances, _stds,
                                                            held_variance)
from legid_ros.core.identification.uncertainty.result import Uncertainty, total_std
from legid_ros.core.robot import Robot


def normal_uncertainty(robot: Robot, pi: np.ndarray, info: np.ndarray, rss: float,
                       n_rows: float, held: Sequence[str] = (),
                       poor_spread: float = POOR_SPREAD, core: str = 'reduced',
                       prior: float = 0.0, prior_width: float = PRIOR_WIDTH,
                       unmodelled_width: float = None, pi_cad: np.ndarray = None
                       ) -> Uncertainty:
    """Core standard deviations from sufficient statistics only (the online estimator).

    Without the rows there are no blocks: the white-residual form ``s^2 (A^T A)^-1`` of Zhu &
    Zhang with ``s^2 = rss / (n_rows - d)``, on the core and the plane of
    :func:`core_uncertainty`, with its prior, its pull toward CAD and what the set holds at
    CAD as there (the pull by the truth's offset from CAD that the data show,
    :func:`model_error.offset_width`). Filtered data makes the noise part optimistic
    (neighbouring rows share their noise); the batch form is the one checked against a Monte-Carlo.

    Args:
        robot: Robot (defines the core).
        pi: Current standard parameters.
        info: ``sum A^T A`` in standard parameters (P, P), nuisance columns eliminated.
        rss: Residual sum of squares at ``pi``.
        n_rows: Rows behind ``info`` (forgetting included).
        held: Core parameter names held fixed (std 0).
        poor_spread: Largest std of an identifiable combination [core-scale units].
        core: The core parameter set (:func:`_core_basis`).
        prior: The estimator's prior weight, in ``info``'s units per squared core-scale unit
            (``n reg``); 0: none.
        prior_width, unmodelled_width, pi_cad: As :func:`core_uncertainty`.
    """
    value, scales, jac, c, names = _core_basis(robot, np.asarray(pi, float), core)
    info = np.asarray(info, float)
    fixed = [names.index(h) for h in held if h in names]
    rows = np.vstack([_mass_plane(c, scales)] + ([np.eye(len(names))[fixed]] if fixed else []))
    z = sla.null_space(rows)
    bread = z.T @ jac.T @ info @ jac @ z
    lam, vec = np.linalg.eigh(0.5 * (bread + bread.T))
    det = lam > 1e-10 * max(lam[-1], 1e-300)
    s2 = max(float(rss), 0.0) / max(float(n_rows) - int(det.sum()), 1.0)
    width = float(prior_width)
    move = _cad_move(robot, pi_cad, core, value, scales, z) if width > 0 else None
    # the white rows' score covariance s^2 B, with the model error as the batch form counts it
    held_width = UNMODELLED_WIDTH * width if unmodelled_width is None else unmodelled_width
    held_score = held_var = None
    if held_width > 0:
        held_score = z.T @ jac.T @ info @ held_basis(robot, pi, jac)
        held_var = held_variance(held_score, vec, lam, det, held_width)
    cov_data, comb_std, cov_z, noise_z, gain = _plane_covariances(
        s2 * bread, vec, lam, det, move, width, poor_spread, prior, held=held_var)
    response = gain @ held_score if held_score is not None else None
    cov_scaled, cov_pi = _finish(robot, pi, core, jac, scales, z, vec, cov_z, comb_std, width,
                                 held_width, response)
    std, std_data = _stds(cov_scaled, cov_data, z, vec, det, scales, prior)
    std[fixed] = 0.0
    std_data[fixed] = 0.0
    vectors = (z @ vec).T
    pull_std = np.sqrt(held_var) if held_var is not None else np.zeros(comb_std.size)
    return Uncertainty(names, value, std, scales, cov_scaled * np.outer(scales, scales),
                       [describe(v, names) for v in vectors], vectors, comb_std,
                       total_std(comb_std, pull_std) <= poor_spread, 0, std_data, float(prior),
                       jacobian=jac / scales[None, :], prior_width=width,
                       covariance_data=z @ cov_data @ z.T, covariance_pi=cov_pi,
                       covariance_noise=(z @ noise_z @ z.T) * np.outer(scales, scales),
                       combination_held_std=pull_std)
