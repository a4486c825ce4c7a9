"""What the batch and sufficient-statistics forms share: the core's basis and its total-mass
plane, a held value's sensitivity, the prior's and the held parameters' share, the per-parameter
standard deviations, and the constants of :mod:`legid_ros.core.identification.uncertainty`."""

from __future__ import annotations

import numpy as np

from legid_ros.core.identification.model_error import core_readout, held_basis, offset_width
from legid_ros.core.identification.parameters.sets import GroupedSet, ReducedSet, StandardSet
from legid_ros.core.inertial import PARAMS_PER_LINK
from legid_ros.core.robot import Robot

DEFAULT_BLOCKS = 30
POOR_SPREAD = 0.05  # [core-scale units], as the excitation report
PRIOR_WIDTH = 1.0  # [core-scale units]: the sets' scales are their prior spreads
#: Width of the parameters a set holds at CAD (inertias about the COM, a group's split)
#: [prior widths]: CAD's inertias and splits are better known than the masses and COMs
#: the data are asked for (a random 20 % inertia change and 5-20 mm COM shifts are ~0.3)
UNMODELLED_WIDTH = 0.3
#: A combination (or quantity) is determined by the data when its data-only std is at most this
#: fraction of the prior width; along the others the estimate is held at CAD +- that width
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
    if robot.link_groups and core != 'links':
        if core in ('grouped', 'grouped_sides'):
            basis = GroupedSet(robot, pi_cad=pi, per_side=core == 'grouped_sides')
        else:
            basis = ReducedSet(robot, pi_cad=pi)
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

def _finish(robot: Robot, pi: np.ndarray, core: str, jac: np.ndarray, scales: np.ndarray,
            z: np.ndarray, vec: np.ndarray, cov_z: np.ndarray, comb_std: np.ndarray,
            width: float, held_width: float, held_response: np.ndarray):
    """(core covariance in scale units, standard-parameter error covariance): ``cov_z`` (in
    the plane ``z``) held at CAD +- ``width`` along the combinations the data do not determine
    (data-only std above :data:`DETERMINED_RATIO` x ``width``), plus what the set holds
    (``held_response``: (plane, P) change of the estimate per held unit, ``held_width``
    units)."""
    if width > 0:
        lacking = vec[:, comb_std > DETERMINED_RATIO * width]
        if lacking.size:
            var = np.einsum('ij,ij->j', lacking, cov_z @ lacking)
            cov_z = cov_z + (lacking * np.maximum(width ** 2 - var, 0.0)) @ lacking.T
    cov_scaled = z @ cov_z @ z.T
    cov_pi = jac @ cov_scaled @ jac.T
    if held_width > 0 and held_response is not None:
        # the fit answers the held difference, and the held values are off by it
        err = jac @ (z @ held_response) - held_basis(robot, pi, jac)
        cov_pi = cov_pi + held_width ** 2 * (err @ err.T)
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
