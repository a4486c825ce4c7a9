"""What the batch and sufficient-statistics forms share: the core's basis and its total-mass
plane, a held value's sensitivity, the prior's and the held parameters' share, the per-parameter
standard deviations, and the constants of :mod:`legid_ros.core.identification.uncertainty`."""

from __future__ import annotations

import numpy as np

from legid_ros.core.identification.model_error import (core_readout, held_basis,
                                                        model_error_ratio, moved_too_far,
                                                        offset_width)
from legid_ros.core.identification.parameters.sets import GroupedSet, ReducedSet, StandardSet
from legid_ros.core.inertial import PARAMS_PER_LINK, get_parameters
from legid_ros.core.robot import Robot

DEFAULT_BLOCKS = 30
POOR_SPREAD = 0.05  # [core-scale units], as the excitation report
PRIOR_WIDTH = 1.0  # [core-scale units]: the sets' scales are their prior spreads
#: Width of the inertias about the COM a set holds at CAD [prior widths] (and of a group's
#: split in the sufficient-statistics form, which has no residual to narrow it with): CAD's
#: inertias are better known than the masses and COMs the data are asked for (a random 20 %
#: inertia change is ~0.3)
UNMODELLED_WIDTH = 0.3
#: Prior width of a group's split between its links [prior widths] in the batch form, which
#: narrows it by what the data say of it: a sensor box on one leg is no better known than the
#: group's own mass (Talos' 1.8 kg box on its left leg_4 link is 2.8 widths of that link)
SPLIT_WIDTH = 1.0
#: A combination (or quantity) is determined by the data when its data-only std is at most this
#: fraction of the prior width; along the others the std is at least the posterior of the data
#: and the prior, and the width itself where the data do not narrow it (held at CAD +- that
#: width, :func:`_least_variance`)
DETERMINED_RATIO = 0.25


def _mass_plane(c: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """The total-mass row in core-scale units (unit norm): ``sum m`` fixed is
    ``(c * scales) . x_scaled`` fixed, not ``c . x_scaled`` (masses have different scales)."""
    row = np.asarray(c, float) * np.asarray(scales, float)
    return row / np.linalg.norm(row)


def _core_basis(robot: Robot, pi: np.ndarray, core: str = 'reduced'):
    """(values, scales, d pi / d x_scaled, mass row, names) of the core at ``pi``.

    ``core``: 'reduced' (the ZMP reduced set), 'grouped' or 'grouped_sides' (mass and 3-D COM
    per link group or group side); 'links' and robots without link groups: every link's mass
    and first moment (a standard-set fit's summary); 'standard': every standard parameter.
    """
    if core == 'standard':  # every standard parameter (what a standard-set fit estimates)
        std = StandardSet(robot, pi)
        sc = std.scales()
        return np.asarray(pi, float).copy(), sc, np.diag(sc), std.mass_row(), list(std.names)
    basis = _core_set(robot, pi, core)
    if basis is not None:
        x0 = basis.from_standard(pi)
        s = basis.scales()
        return x0, s, basis.jacobian(x0) * s[None, :], basis.mass_row(), list(basis.names)
    std = StandardSet(robot, pi)
    cols = [i for i in range(std.size) if i % PARAMS_PER_LINK < 4]
    sc = std.scales()[cols]
    jac = np.zeros((std.size, len(cols)))
    jac[cols, np.arange(len(cols))] = sc
    return (np.asarray(pi, float)[cols], sc, jac, std.mass_row()[cols],
            [std.names[i] for i in cols])


def _core_set(robot: Robot, pi: np.ndarray, core: str):
    """The core's parameter set built at ``pi`` (reduced or grouped), or None where the core
    is every link's mass and first moment ('links', no link groups) or 'standard'."""
    if core == 'standard' or not robot.link_groups or core == 'links':
        return None
    if core in ('grouped', 'grouped_sides'):
        return GroupedSet(robot, pi_cad=pi, per_side=core == 'grouped_sides')
    return ReducedSet(robot, pi_cad=pi)


def core_reader(robot: Robot, pi: np.ndarray, core: str = 'reduced'):
    """A function ``pi -> core values`` (:func:`_core_basis`'s values, in its names' order)
    that builds the core's set once (0.9 ms on the biped's grouped sets; reading it, 0.05 ms):
    what an :class:`~.result.Uncertainty` computed earlier reads at a newer estimate, its stds
    kept. ``pi``: standard parameters to build the set at (CAD)."""
    pi = np.asarray(pi, float)
    if core == 'standard':
        return lambda p: np.asarray(p, float).copy()
    basis = _core_set(robot, pi, core)
    if basis is not None:
        return lambda p: basis.from_standard(np.asarray(p, float))
    cols = [i for i in range(pi.size) if i % PARAMS_PER_LINK < 4]
    return lambda p: np.asarray(p, float)[cols]


def _held_sensitivity(i: int, cs: np.ndarray, g: np.ndarray, z: np.ndarray, vec: np.ndarray,
                      lam: np.ndarray, use: np.ndarray) -> np.ndarray:
    """Change of the estimate (core-scale units) per unit change of held parameter ``i``.

    The held value moves along ``e`` (unit in ``i``, the total mass kept by the other masses:
    in core-scale units the total is ``cs . x`` with ``cs = c * scales``, as in
    :func:`_mass_plane`), the free directions answer by the fit:
    ``- (G_z^T G_z + prior)^-1 G_z^T G e``.
    """
    e = np.zeros(cs.size)
    e[i] = 1.0
    rest = np.asarray(cs, float).copy()
    rest[i] = 0.0
    e -= cs[i] * rest / max(rest @ rest, 1e-300)
    ge = g @ e
    gz = g @ z
    inv = vec[:, use] / lam[use]
    return e - z @ (inv @ (vec[:, use].T @ (gz.T @ ge)))


def _pull_offset(move: np.ndarray, vec: np.ndarray, lam: np.ndarray, det: np.ndarray,
                 comb_std: np.ndarray, prior: float, width: float) -> float:
    """How far the prior pulls toward CAD [core-scale units]: the truth's offset from CAD the
    data show (:func:`model_error.offset_width`) when there is a prior and a width; else
    ``width`` (0 with no width).

    Args:
        move: (k,) estimate minus CAD in the plane [core-scale units].
        vec, lam, det: Eigen-decomposition of the information in the plane; which are seen.
        comb_std: (k,) data-only std per combination.
        prior: The estimator's prior weight (as ``lam``).
        width: The prior width [core-scale units].
    """
    if not (width > 0 and prior > 0):
        return float(width)
    return offset_width(vec.T @ move, comb_std, np.where(det, lam, 0.0) / (lam + prior), width)


def _cad_move(robot: Robot, pi_cad, core: str, value: np.ndarray, scales: np.ndarray,
              z: np.ndarray) -> np.ndarray:
    """The estimate's move from CAD in the plane [core-scale units] (``pi_cad`` None: the
    robot model's parameters)."""
    cad = _core_basis(robot, np.asarray(pi_cad if pi_cad is not None else
                                        get_parameters(robot.model), float), core)[0]
    return z.T @ ((value - cad) / scales)


def _plane_covariances(noise_meat: np.ndarray, vec: np.ndarray, lam: np.ndarray,
                       det: np.ndarray, move, width: float, poor_spread: float, prior: float,
                       held: np.ndarray = None):
    """What the batch and sufficient-statistics forms do alike with their score covariance.

    The model error the residual does not show (:func:`model_error.model_error_ratio`, then
    :func:`model_error.moved_too_far`; with a prior width), the data-only covariance and its
    std per combination, and the estimator's own error: the noise through the prior, the
    prior's pull by the truth's offset from CAD the data show.

    Args:
        noise_meat: (k, k) score covariance of the noise in the plane.
        vec, lam, det: Eigen-decomposition of the information in the plane; which are seen.
        move: (k,) estimate minus CAD in the plane [core-scale units] (None without a width).
        width: Prior width [core-scale units] (0: no model-error or pull terms).
        poor_spread: Largest std of an identifiable combination [core-scale units].
        prior: The estimator's prior weight (as ``lam``); 0: none.
        held: (k,) variance of the data-only estimate's response to what the set holds at CAD
            along each combination [core-scale units^2] (:func:`held_variance`; None: 0).

    Returns:
        (cov_data, comb_std, cov_z, noise_z, gain): data-only covariance and std per
        combination, the estimate's error covariance and its noise part in the plane, and the
        estimate's response to a score (plane x plane).
    """
    meat = noise_meat
    if width > 0:
        kappa = model_error_ratio(meat, vec, lam, det, move, width, poor_spread, prior,
                                  held=held)
        meat = moved_too_far(meat * (1.0 + kappa), vec, lam, det, move, width, poor_spread,
                             held=held)
    inv = vec[:, det] / lam[det]
    # data alone: per eigen-direction of the information (identifiability)
    cov_data = inv @ (vec[:, det].T @ meat @ vec[:, det]) @ inv.T
    comb_std = np.array([np.sqrt(max(vec[:, i] @ cov_data @ vec[:, i], 0.0)) if det[i]
                         else np.inf for i in range(lam.size)])
    if prior > 0:
        inv_p = vec / (lam + prior)
        noise_z = inv_p @ (vec.T @ noise_meat @ vec) @ inv_p.T
        # the prior's pull: by the truth's offset from CAD as the data show it, within the width
        offset = _pull_offset(move, vec, lam, det, comb_std, prior, width) if width > 0 \
            else width
        cov_z = inv_p @ (vec.T @ meat @ vec) @ inv_p.T + (prior * offset) ** 2 * (
            inv_p @ inv_p.T)
        gain = inv_p @ vec.T
    else:
        cov_z = cov_data
        noise_z = inv @ (vec[:, det].T @ noise_meat @ vec[:, det]) @ inv.T
        gain = inv @ vec[:, det].T
    return cov_data, comb_std, cov_z, noise_z, gain


def held_variance(held_score: np.ndarray, vec: np.ndarray, lam: np.ndarray, det: np.ndarray,
                  held_width: float) -> np.ndarray:
    """(k,) variance of the data-only estimate's response to what the set holds at CAD along
    each eigen-combination of the plane [core-scale units^2] (0 where the data do not see it).

    Args:
        held_score: (k, P) the plane's score per unit of each held direction
            (:func:`model_error.held_basis`): ``G^T U`` of the rows' Jacobians.
        vec, lam, det: Eigen-decomposition of the information in the plane; which are seen.
        held_width: Width of the held parameters [held_basis units].
    """
    proj = vec.T @ held_score
    out = np.zeros(lam.size)
    out[det] = held_width ** 2 * np.sum(proj[det] ** 2, axis=1) / lam[det] ** 2
    return out


def held_widths(robot: Robot, pi: np.ndarray, held_width: float,
                split_width: float) -> np.ndarray:
    """(P,) prior width of each :func:`model_error.held_basis` unit [its units]: a group's split
    between its links (masses and first moments) ``split_width``, the inertias about the COM
    ``held_width``."""
    n = np.asarray(pi).size
    return np.where(np.arange(n) % PARAMS_PER_LINK < 4, float(split_width), float(held_width))


def _least_variance(comb_std: np.ndarray, width: float) -> np.ndarray:
    """Least variance [core-scale units^2] of each combination the data do not determine.

    Data-only std ``s`` above the prior width ``w`` (or unseen): held at CAD +- ``w``, the
    variance ``w^2``. Between :data:`DETERMINED_RATIO` ``w`` and ``w``: the data narrow the
    prior, and the least is the posterior of the two, ``1 / (1 / s^2 + 1 / w^2)`` (the prior
    width alone there ignored what the data show: on Solo12's standard set in MuJoCo the
    whole-body COM's std was 1.5x its error over 8 seeds, 1.1x with this)."""
    s2 = np.asarray(comb_std, float) ** 2
    w2 = float(width) ** 2
    with np.errstate(divide='ignore', invalid='ignore'):
        post = w2 / (1.0 + w2 / s2)
    return np.where(s2 > w2, w2, post)


def _finish(robot: Robot, pi: np.ndarray, core: str, jac: np.ndarray, scales: np.ndarray,
            z: np.ndarray, vec: np.ndarray, cov_z: np.ndarray, comb_std: np.ndarray,
            width: float, held_width: float, held_response: np.ndarray,
            held_cov: np.ndarray = None):
    """(core covariance in scale units, standard-parameter error covariance): ``cov_z`` (in
    the plane ``z``) at least :func:`_least_variance` along the combinations the data do not
    determine (data-only std above :data:`DETERMINED_RATIO` x ``width``: held at CAD +-
    ``width``, or the posterior where the data narrow it), plus what the set holds
    (``held_response``: (plane, P) change of the estimate per held unit, ``held_width``
    units; ``held_cov``: their (P, P) covariance in those units instead of ``held_width^2``
    each, :func:`held_widths` narrowed by the data)."""
    if width > 0:
        open_ = comb_std > DETERMINED_RATIO * width
        lacking = vec[:, open_]
        if lacking.size:
            var = np.einsum('ij,ij->j', lacking, cov_z @ lacking)
            least = _least_variance(comb_std[open_], width)
            cov_z = cov_z + (lacking * np.maximum(least - var, 0.0)) @ lacking.T
    cov_scaled = z @ cov_z @ z.T
    cov_pi = jac @ cov_scaled @ jac.T
    if held_width > 0 and held_response is not None:
        # the fit answers the held difference, and the held values are off by it
        err = jac @ (z @ held_response) - held_basis(robot, pi, jac)
        cov_pi = cov_pi + (held_width ** 2 * (err @ err.T) if held_cov is None
                           else err @ held_cov @ err.T)
        read = core_readout(robot, pi, core, scales)
        cov_scaled = read @ cov_pi @ read.T
    return cov_scaled, cov_pi


def _stds(cov_scaled, cov_data, z, vec, det, scales, prior):
    """(std, data-only std) per core parameter [its units]; a parameter that moves along a
    direction the data do not see has no data-only std (inf), nor a std without a prior."""
    std = np.sqrt(np.maximum(np.diag(cov_scaled), 0.0)) * scales
    std_data = np.sqrt(np.maximum(np.diag(z @ cov_data @ z.T), 0.0)) * scales
    unseen = z @ vec[:, ~det]
    if unseen.size:
        std_data[np.abs(unseen).max(axis=1) > 1e-6] = np.inf
        if prior <= 0:
            std = np.where(np.isinf(std_data), np.inf, std)
    return std, std_data
