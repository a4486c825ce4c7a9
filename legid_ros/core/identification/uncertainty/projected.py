"""A standard-set fit's uncertainty read in a smaller core (the ZMP reduced set, a grouped set).

A standard-set fit (``floating_qp``, ``sdp``, ``zmp_qp``... on the standard set) estimates
every link's mass, first moment and inertia together. Linearising its rows in a smaller core
with the other parameters fixed at the estimate gives that core's spread as if they were known:
on Solo12's floating-base rows another sampling of the same run (2 ms later) moved such a
combination by 14 of those standard deviations, and on a simulated biped the reported spread
was 0.14-0.27 of the spread over noise seeds for some parameters. Here the uncertainty is
computed where the fit is (every standard parameter: the ``'standard'`` core of
:func:`~legid_ros.core.identification.uncertainty.core_uncertainty`) and carried to the smaller
core through how that core reads the standard parameters
(:func:`~legid_ros.core.identification.model_error.core_readout`): the covariance, the
data-only covariance and the spread over noise alone.

What the standard rows do not see (e.g. a link's first moment along its joint axis against the
link above it) the fit's prior holds at CAD; a combination of the smaller core that reads more
than :data:`UNSEEN_SHARE` prior widths of it is not determined by the data (no data-only std)
and, as in the core, is held at CAD +- the prior width. A combination reading less carries
that share of the prior width in its data-only std.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from legid_ros.core.identification.identifiability import describe
from legid_ros.core.identification.model_error import core_readout
from legid_ros.core.identification.uncertainty.core import (DETERMINED_RATIO, POOR_SPREAD,
                                                            _core_basis, _finish, _mass_plane)
from legid_ros.core.identification.uncertainty.result import Uncertainty
from legid_ros.core.robot import Robot

#: A combination reading more than this of the directions the data do not see [prior widths]
#: is not determined by the data (its std is then at least that share of the prior width)
UNSEEN_SHARE = DETERMINED_RATIO


def _unseen_share(vectors: np.ndarray, unseen: np.ndarray) -> np.ndarray:
    """Per row of ``vectors`` (core-scale units), how much it reads of what the data do not
    see [prior widths]: the norm of its reading of the unseen directions ``unseen`` (u, q)."""
    return np.linalg.norm(vectors @ unseen.T, axis=1) if unseen.size else \
        np.zeros(len(vectors))


def read_in_core(source: Uncertainty, robot: Robot, pi: np.ndarray, core: str = 'reduced',
                 poor_spread: float = POOR_SPREAD) -> Uncertainty:
    """``source`` (the uncertainty of a standard-set fit where it fits) in ``core``.

    Args:
        source: Uncertainty on every standard parameter (``core_uncertainty(...,
            core='standard')``; or on every link's mass and first moment, 'links'), with
            ``covariance_pi``, ``covariance_data`` and ``covariance_noise``.
        robot: Robot (defines ``core``).
        pi: The estimate's standard parameters.
        core: 'reduced', 'grouped' or 'grouped_sides'.
        poor_spread: Largest std of an identifiable combination [core-scale units].

    Returns:
        The uncertainty on ``core``: combinations are the eigen-directions of its data-only
        covariance in the total-mass plane (the fit holds the total mass), weakest first,
        those reading more than :data:`UNSEEN_SHARE` of what the data do not see with an
        infinite std; ``covariance_pi`` the source's.
    """
    pi = np.asarray(pi, float)
    value, scales, jac, c, names = _core_basis(robot, pi, core)
    read = core_readout(robot, pi, core, scales)  # (q, P) d x_scaled / d pi
    lmap = read @ (source.jacobian * source.scales[None, :])  # (q, ql) from source scale units
    cov = read @ source.covariance_pi @ read.T
    lsc = np.outer(source.scales, source.scales)
    noise = lmap @ (source.covariance_noise / lsc) @ lmap.T if source.covariance_noise.size \
        else cov
    z = sla.null_space(_mass_plane(c, scales)[None, :])
    # what the source's data do not see, bounded by the prior width (the prior holds it there)
    unseen = source.vectors[~np.isfinite(source.combination_std)] @ lmap.T  # (u, q)
    bounded = (lmap @ source.covariance_data @ lmap.T
               + source.prior_width ** 2 * unseen.T @ unseen)
    lam, w = np.linalg.eigh(z.T @ (0.5 * (bounded + bounded.T)) @ z)
    comb_std = np.sqrt(np.maximum(lam, 0.0))
    comb_std[_unseen_share((z @ w).T, unseen) > UNSEEN_SHARE] = np.inf
    # along what the data do not determine: the core's floor (held at CAD +- the prior width
    # where the data do not narrow it, the posterior where they do)
    cov, _ = _finish(robot, pi, core, jac, scales, z, w, z.T @ cov @ z, comb_std,
                     source.prior_width, 0.0, None)
    order = np.argsort(-comb_std, kind='stable')
    vectors, comb_std = (z @ w).T[order], comb_std[order]
    cov_data = z @ z.T @ bounded @ z @ z.T
    std = np.sqrt(np.maximum(np.diag(cov), 0.0)) * scales
    std_data = np.sqrt(np.maximum(np.diag(cov_data), 0.0)) * scales
    std_data[_unseen_share(np.eye(scales.size), unseen) > UNSEEN_SHARE] = np.inf
    sc = np.outer(scales, scales)
    return Uncertainty(names, value, std, scales, cov * sc,
                       [describe(v, names) for v in vectors], vectors, comb_std,
                       comb_std <= poor_spread, source.n_blocks, std_data, source.prior,
                       jacobian=jac / scales[None, :], prior_width=source.prior_width,
                       covariance_data=cov_data, covariance_pi=source.covariance_pi,
                       covariance_noise=noise * sc)
