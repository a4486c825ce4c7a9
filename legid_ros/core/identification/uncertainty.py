"""Standard deviations of an identified set: per core parameter and per identifiable combination.

The relative standard deviations of Zhu & Zhang (``s^2 (A^T A)^-1``, see
:mod:`legid_ros.core.identification.identifiability`) assume white, equal-variance residuals.
The rows of a floating-base run are neither: the ZMP and efforts are filtered (neighbouring
samples share their noise) and part of the residual is model error that follows the motion.
So the covariance here is the sandwich form ``B^-1 M B^-1`` with ``B = G^T G`` (the information
of the rows about the core, linearised at the estimate) and ``M = sum_b (G_b^T r_b)(G_b^T r_b)^T``
over contiguous blocks ``b`` of samples (a batch-means estimate of the score's covariance: it
holds for correlated and unequal residuals as long as a block is longer than their correlation).

It is computed on the *core* of :mod:`legid_ros.core.identification.identifiability` (the ZMP
reduced set of Wu & Gao 2021 for a robot with link groups: axial COM and mass per group, or the
grouped set the method fitted: 3-D COM and mass per group or group side; else every link's mass
and first moment), in the plane the data must decide (total-mass equality and held parameters
removed). Combinations are the eigen-directions of ``B``; one is *identifiable* when its
data-only standard deviation is at most ``poor_spread`` core-scale units (the excitation
report's 'ok'); ``std_data`` is ``inf`` along a direction the data has no information about.

The reported ``std`` is that of the estimate's *error*, not of its spread alone: for a
regularised estimate the error along what the data do not determine is the prior's pull
toward CAD, so it counts the prior's bias (the truth within ``prior_width`` scale units of
CAD; the pull by the offset from CAD the determined combinations show, at most that width:
:func:`~legid_ros.core.identification.model_error.offset_width`), the parameters the set holds at CAD and model error the residual does not show
(:mod:`legid_ros.core.identification.model_error`); ``std_along(v, noise_only=True)`` keeps
the spread over noise alone. :mod:`legid_ros.core.identification.summary` turns it into the
physical quantities the data determine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Union

import numpy as np
import scipy.linalg as sla

from legid_ros.core.identification.identifiability import describe
from legid_ros.core.identification.model_error import (core_readout, effective_samples,
                                                        held_basis, model_error_ratio,
                                                        moved_too_far, offset_width)
from legid_ros.core.identification.parameters.sets import GroupedSet, ReducedSet, StandardSet
from legid_ros.core.inertial import PARAMS_PER_LINK, get_parameters
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


@dataclass
class Uncertainty:
    """Standard deviations of the core of an identified set.

    Attributes:
        names: Core parameter names (e.g. ``lc_thigh``, ``m_thigh``).
        value: Core values of the estimate [m, kg, kg.m].
        std: Standard deviation per core parameter (same units; 0 for held parameters): the
            spread of the estimate over noise and motion, with the estimator's prior (if any)
            holding the directions the data barely sees; where ``std_data`` is large the error
            there is the prior's bias, not this spread.
        scales: Core scale per parameter (units of the combinations).
        covariance: Core covariance of the estimate (SI units; of ``std``).
        combinations: Readable combination per eigen-direction, weakest first.
        vectors: (k, q) unit vectors of the combinations, in core-scale units.
        combination_std: Standard deviation of each combination [core-scale units].
        identifiable: Whether each combination's std is at most ``poor_spread``.
        n_blocks: Blocks of samples behind the score covariance.
        std_data: Standard deviation per core parameter from the data alone (``inf`` where the
            data has no information at all).
        prior: Prior weight used for ``std`` (0: none, ``std == std_data``).
        jacobian: (P, q) ``d pi / d x`` of the core (SI units), to carry the covariance to any
            quantity of the standard parameters.
        prior_width: How far the truth may be from CAD [core-scale units], counted in ``std``.
        covariance_pi: (P, P) covariance of the error of the standard parameters [SI]: the
            core's and what the set holds at CAD (for any quantity of ``pi``).
        covariance_noise: Core covariance of the spread over noise and motion alone (SI).
        covariance_data: Data-only covariance in core-scale units (finite part: see
            :meth:`std_data_along`).
    """

    names: List[str]
    value: np.ndarray
    std: np.ndarray
    scales: np.ndarray
    covariance: np.ndarray
    combinations: List[str] = field(default_factory=list)
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    combination_std: np.ndarray = field(default_factory=lambda: np.zeros(0))
    identifiable: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    n_blocks: int = 0
    std_data: np.ndarray = field(default_factory=lambda: np.zeros(0))
    prior: float = 0.0
    jacobian: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    prior_width: float = 0.0
    covariance_data: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    covariance_pi: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    covariance_noise: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    def std_data_along(self, vector: np.ndarray) -> float:
        """Data-only standard deviation of ``vector . x_scaled`` (``inf``: some of it along a
        combination the data do not see; 0 along the fixed directions: total mass, held)."""
        v = np.asarray(vector, float)
        if not self.vectors.size:
            return float('inf')
        c = self.vectors @ v
        if np.any(~np.isfinite(self.combination_std) & (np.abs(c) > 1e-3 * max(
                np.linalg.norm(v), 1e-300))):
            return float('inf')
        return float(np.sqrt(max(v @ self.covariance_data @ v, 0.0)))

    def std_along(self, vector: np.ndarray, noise_only: bool = False) -> float:
        """Standard deviation of ``vector . x_scaled`` (``vector`` in core-scale units);
        ``noise_only``: the spread over noise and motion alone (no prior bias, nothing held:
        what repeated runs of one robot scatter by)."""
        v = np.asarray(vector, float) / self.scales
        cov = self.covariance_noise if noise_only and self.covariance_noise.size \
            else self.covariance
        return float(np.sqrt(max(v @ cov @ v, 0.0)))

    def identifiable_part(self, error: np.ndarray) -> np.ndarray:
        """``error`` (core units) without its components along non-identifiable combinations.

        What is left is the error in the combinations the data determines (plus the directions
        fixed otherwise: total mass, held parameters).
        """
        e = np.asarray(error, float) / self.scales
        bad = self.vectors[~self.identifiable]
        if bad.size:
            q, _ = np.linalg.qr(bad.T)
            e = e - q @ (q.T @ e)
        return e * self.scales

    def as_dict(self) -> dict:
        """Plain form (for ``parameters.yaml``; ``None`` where the data do not see it)."""
        def num(v):
            return float(v) if np.isfinite(v) else None
        return {'parameters': {n: {'value': float(v), 'std': num(s), 'std_data': num(d)}
                               for n, v, s, d in zip(self.names, self.value, self.std,
                                                     self.std_data)},
                'combinations': [{'combination': c, 'std_scale_units': num(s),
                                  'identifiable': bool(ok)}
                                 for c, s, ok in zip(self.combinations, self.combination_std,
                                                     self.identifiable)],
                'scales': {n: float(s) for n, s in zip(self.names, self.scales)},
                'n_blocks': int(self.n_blocks), 'prior': float(self.prior),
                'prior_width_scale_units': float(self.prior_width)}

    def lines(self) -> List[str]:
        """Readable lines: per parameter value +- std, then the combinations (no 'inf': what
        the data do not see is said in words)."""
        out = ['core parameters (std: noise, model and the prior toward CAD; then from the data '
               'alone):']
        for n, v, s, d in zip(self.names, self.value, self.std, self.std_data):
            unit, k = ('mm', 1e3) if n.startswith(('lc_', 'mx_', 'my_', 'mz_', 'cx_', 'cy_',
                                                 'cz_')) else ('kg', 1.0)
            std = f'+- {k * s:.2g}' if np.isfinite(s) else '(not determined: no prior)'
            data = f'{k * d:.2g}' if np.isfinite(d) else 'not determined'
            out.append(f'  {n} = {k * v:.4g} {std} {unit} (data alone: {data})')
        for c, s, ok in zip(self.combinations, self.combination_std, self.identifiable):
            std = f'{s:9.3g}' if np.isfinite(s) else '  not seen'
            out.append(f'  {"ok  " if ok else "POOR"} std {std} x scale: {c}')
        return out


def _mass_plane(c: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """The total-mass row in core-scale units (unit norm): ``sum m`` fixed is
    ``(c * scales) . x_scaled`` fixed, not ``c . x_scaled`` (masses have different scales)."""
    row = np.asarray(c, float) * np.asarray(scales, float)
    return row / np.linalg.norm(row)


def _core_basis(robot: Robot, pi: np.ndarray, core: str = 'reduced'):
    """(values, scales, d pi / d x_scaled, mass row, names) of the core at ``pi``.

    ``core``: 'reduced' (the ZMP reduced set), 'grouped' or 'grouped_sides' (mass and 3-D COM
    per link group or group side); 'links' and robots without link groups: every link's mass
    and first moment (a standard-set fit's core).
    """
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


def core_uncertainty(robot: Robot, pi: np.ndarray, jac_pi: np.ndarray, resid: np.ndarray,
                     n_samples: int, held: Union[Sequence[str], Dict[str, float]] = (),
                     nuisance: np.ndarray = None,
                     n_blocks: int = DEFAULT_BLOCKS, poor_spread: float = POOR_SPREAD,
                     prior: float = 0.0, core: str = 'reduced',
                     prior_width: float = PRIOR_WIDTH,
                     unmodelled_width: float = None, pi_cad: np.ndarray = None) -> Uncertainty:
    """Covariance of the core from the rows' residual and Jacobian, the prior included.

    In the plane the data must decide (:mod:`.uncertainty`): the noise and motion (the
    sandwich over blocks, shrunk by the prior; widened where the estimate moved from CAD too
    far for it, :func:`.model_error.moved_too_far`), the prior's pull toward CAD (the truth is
    within ``prior_width`` scale units of CAD, by the offset the data show:
    ``(B + P)^-1 P W P (B + P)^-1``), and the
    parameters the set holds at CAD (:func:`.model_error.held_basis`, ``UNMODELLED_WIDTH`` of
    that width). Along a combination the data alone do not determine (std above
    :data:`DETERMINED_RATIO` x ``prior_width``) the std is at least ``prior_width`` (held at
    CAD +- that width).

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
            (:func:`.model_error.moved_too_far`).
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
    score = np.array([gz[a:b].T @ r[a:b] for a, b in zip(edges[:-1], edges[1:])])
    meat = score.T @ score * (nb / (nb - 1.0))  # the cluster-robust small-sample factor
    inv = vec[:, det] / lam[det]
    noise_meat = meat
    if prior_width > 0:
        cad = _core_basis(robot, np.asarray(pi_cad if pi_cad is not None else
                                            get_parameters(robot.model), float), core)[0]
        move = z.T @ ((value - cad) / scales)
        kappa = model_error_ratio(meat, vec, lam, det, move, float(prior_width),
                                  poor_spread, prior)
        meat = moved_too_far(meat * (1.0 + kappa), vec, lam, det, move, float(prior_width),
                             poor_spread)
    # data alone: per eigen-direction of the information (identifiability)
    cov_data = inv @ (vec[:, det].T @ meat @ vec[:, det]) @ inv.T
    comb_std = np.array([np.sqrt(max(vec[:, i] @ cov_data @ vec[:, i], 0.0)) if det[i]
                         else np.inf for i in range(lam.size)])
    # the estimator's own error: the noise through its prior, the prior's bias and what the
    # set holds at CAD
    width = float(prior_width)
    # the prior's pull: by the truth's offset from CAD as the data show it, within the width
    offset = offset_width(vec.T @ move, comb_std, np.where(det, lam, 0.0) / (lam + prior),
                          width) if width > 0 and prior > 0 else width
    if prior > 0:
        inv_p = vec / (lam + prior)
        noise_z = inv_p @ (vec.T @ noise_meat @ vec) @ inv_p.T
        cov_z = inv_p @ (vec.T @ meat @ vec) @ inv_p.T + (prior * offset) ** 2 * (
            inv_p @ inv_p.T)
        gain = inv_p @ vec.T
    else:
        cov_z = cov_data
        noise_z = inv @ (vec[:, det].T @ noise_meat @ vec[:, det]) @ inv.T
        gain = inv @ vec[:, det].T
    held_width = UNMODELLED_WIDTH * width if unmodelled_width is None else unmodelled_width
    response = None
    if held_width > 0:
        u = np.asarray(jac_pi, float) @ held_basis(robot, pi, jac)
        if nq is not None:
            u -= nq @ (nq.T @ u)
        response = gain @ (gz.T @ u)
    cov_scaled, cov_pi = _finish(robot, pi, core, jac, scales, z, vec, cov_z, comb_std, width,
                                 held_width, response)
    noise_scaled = z @ noise_z @ z.T
    for h, sd in held_std.items():  # a held value's own error moves the rest of the estimate
        if h in names and sd > 0:
            sens = _held_sensitivity(names.index(h), c * scales, g, z, vec, lam + prior,
                                     det | (prior > 0))
            cov_scaled = cov_scaled + np.outer(sens, sens) * (sd / scales[names.index(h)]) ** 2
            noise_scaled = noise_scaled + np.outer(sens, sens) * (
                sd / scales[names.index(h)]) ** 2
            cov_pi = cov_pi + jac @ np.outer(sens, sens) @ jac.T * (
                sd / scales[names.index(h)]) ** 2
    std, std_data = _stds(cov_scaled, cov_data, z, vec, det, scales, prior)
    for h, sd in held_std.items():
        if h in names:
            std_data[names.index(h)] = sd
            if not sd > 0:
                std[names.index(h)] = 0.0
    vectors = (z @ vec).T
    return Uncertainty(names, value, std, scales, cov_scaled * np.outer(scales, scales),
                       [describe(v, names) for v in vectors], vectors, comb_std,
                       comb_std <= poor_spread, nb, std_data, float(prior),
                       jacobian=jac / scales[None, :], prior_width=width,
                       covariance_data=z @ cov_data @ z.T, covariance_pi=cov_pi,
                       covariance_noise=noise_scaled * np.outer(scales, scales))


def normal_uncertainty(robot: Robot, pi: np.ndarray, info: np.ndarray, rss: float,
                       n_rows: float, held: Sequence[str] = (),
                       poor_spread: float = POOR_SPREAD, core: str = 'reduced',
                       prior: float = 0.0, prior_width: float = PRIOR_WIDTH,
                       unmodelled_width: float = None) -> Uncertainty:
    """Core standard deviations from sufficient statistics only (the online estimator).

    Without the rows there are no blocks: the white-residual form ``s^2 (A^T A)^-1`` of Zhu &
    Zhang with ``s^2 = rss / (n_rows - d)``, on the core and the plane of
    :func:`core_uncertainty`, with its prior, its pull toward CAD and what the set holds at
    CAD as there (the pull by the truth's offset from CAD that the data show,
    :func:`.model_error.offset_width`). Filtered data makes the noise part optimistic (neighbouring rows share
    their noise); the batch form is the one checked against a Monte-Carlo.

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
        prior_width, unmodelled_width: As :func:`core_uncertainty`.
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
    comb_std = np.where(det, np.sqrt(s2 / np.where(det, lam, 1.0)), np.inf)
    cov_data = (vec[:, det] / lam[det]) @ vec[:, det].T * s2
    width = float(prior_width)
    if prior > 0:
        inv_p = vec / (lam + prior)
        noise_z = s2 * (inv_p * lam) @ inv_p.T
        # the prior's pull, by the truth's offset from CAD the data show (as core_uncertainty)
        cad = _core_basis(robot, get_parameters(robot.model), core)[0]
        offset = offset_width(vec.T @ (z.T @ ((value - cad) / scales)), comb_std,
                              np.where(det, lam, 0.0) / (lam + prior), width) \
            if width > 0 else 0.0
        cov_z = noise_z + (prior * offset) ** 2 * (inv_p @ inv_p.T)
        gain = inv_p @ vec.T
    else:
        cov_z = noise_z = cov_data
        gain = (vec[:, det] / lam[det]) @ vec[:, det].T
    held_width = UNMODELLED_WIDTH * width if unmodelled_width is None else unmodelled_width
    response = None
    if held_width > 0:
        response = gain @ (z.T @ jac.T @ info @ held_basis(robot, pi, jac))
    cov_scaled, cov_pi = _finish(robot, pi, core, jac, scales, z, vec, cov_z, comb_std, width,
                                 held_width, response)
    std, std_data = _stds(cov_scaled, cov_data, z, vec, det, scales, prior)
    std[fixed] = 0.0
    std_data[fixed] = 0.0
    vectors = (z @ vec).T
    return Uncertainty(names, value, std, scales, cov_scaled * np.outer(scales, scales),
                       [describe(v, names) for v in vectors], vectors, comb_std,
                       comb_std <= poor_spread, 0, std_data, float(prior),
                       jacobian=jac / scales[None, :], prior_width=width,
                       covariance_data=z @ cov_data @ z.T, covariance_pi=cov_pi,
                       covariance_noise=(z @ noise_z @ z.T) * np.outer(scales, scales))


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
