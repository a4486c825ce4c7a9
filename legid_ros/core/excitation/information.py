"""Predicted identifiability of a motion: the information of its ZMP / CoP rows at CAD.

The linear ZMP rows of Wu & Gao 2021 (:func:`legid_ros.core.identification.rows.regressors.
zmp_rows`) of the planned motion, evaluated at the CAD ZMP and vertical force, taken at
``rate_hz`` (about the rate at which the measured ZMP's error decorrelates) away from contact
changes (``transition_s``, as the identification leaves them out), with a ZMP error of
``sigma_m``. Their information, on the core of the parameter set (the grouped per-side set:
mass and 3-D COM per link side), gives the predicted standard deviation of every combination
(the eigen-directions, :func:`legid_ros.core.identification.uncertainty.normal_uncertainty`).

A combination ``v`` (unit vector in core-scale units) is *determined* when its standard
deviation is at most ``tol(v) = sqrt(sum v_i^2 tol_i^2)``, with ``tol_i`` the tolerance of
parameter ``i`` in core-scale units: 2 % of its CAD mass for a mass, 3 mm for a COM coordinate.
The same rule applied to an identified estimate's own (sandwich) uncertainty gives the
measured share of determined combinations.

The grouped sets hold every link's inertia about its COM at CAD; a real link's differs (the
bench's truth: by a factor 0.8-1.2), and a fast motion turns that into ZMP error the fit
absorbs. The design therefore also predicts, per combination, the least-squares *bias* from
independent inertia errors of ``inertia_spread`` (std of the factor) on every link, and scores
a combination by ``sqrt(std^2 + bias^2)`` against its tolerance: fast swings add information
and bias, and the search weighs both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List

import numpy as np
import pinocchio as pin

from legid_ros.core.excitation.trajectory import DenseTrajectory
from legid_ros.core.identification.rows.regressors import zmp_rows
from legid_ros.core.identification.uncertainty import Uncertainty, normal_uncertainty
from legid_ros.core.robot import Robot

MASS_TOL = 0.02  # [-] of the CAD mass
COM_TOL_M = 0.003  # [m]
INERTIA_SPREAD = 0.2 / np.sqrt(3.0)  # [-] std of a uniform 0.8-1.2 factor


@dataclass
class Prediction:
    """Predicted identifiability of a motion.

    Attributes:
        uncertainty: Predicted core uncertainty (combinations weakest first).
        determined: Per combination, ``sqrt(std^2 + bias^2)`` within its tolerance.
        bias: Per combination, predicted bias from the inertia about the COM held at CAD
            [core-scale units].
        fraction: Share of determined combinations [-].
        soft_count: ``sum min(1, (tol / std)^2)`` over the combinations (the design's
            objective: the count, made smooth).
        log_det: Log-determinant of the core information in tolerance units (mass plane).
        n_rows: ZMP rows behind it.
    """

    uncertainty: Uncertainty
    determined: np.ndarray
    bias: np.ndarray
    fraction: float
    soft_count: float
    log_det: float
    n_rows: int

    def lines(self, top: int = 60) -> List[str]:
        """Readable: determined combinations first, with their std in tolerance units."""
        u = self.uncertainty
        tol = combination_tolerance(u)
        out = [f'predicted: {int(self.determined.sum())} of {self.determined.size} combinations '
               f'determined ({100 * self.fraction:.0f} %; within 2 % mass / 3 mm COM)']
        order = np.argsort(np.hypot(u.combination_total_std, self.bias) / tol)
        for i in order[:top]:
            tag = 'ok  ' if self.determined[i] else 'POOR'
            out.append(f'  {tag} std {u.combination_total_std[i] / tol[i]:8.3g}, bias '
                       f'{self.bias[i] / tol[i]:8.3g} x tolerance: {u.combinations[i]}')
        return out


def tolerances(u: Uncertainty) -> np.ndarray:
    """Per core parameter, its tolerance in core-scale units."""
    tol = np.array([MASS_TOL * abs(v) if n.startswith('m_') else COM_TOL_M
                    for n, v in zip(u.names, u.value)])
    return tol / u.scales


def combination_tolerance(u: Uncertainty) -> np.ndarray:
    """Per combination, ``tol(v)`` of the module docstring."""
    return np.sqrt((u.vectors ** 2) @ tolerances(u) ** 2)


def determined(u: Uncertainty) -> np.ndarray:
    """Per combination of ``u``, whether its std is within its tolerance."""
    return np.asarray(u.combination_total_std, float) <= combination_tolerance(u)


def design_rows(traj: DenseTrajectory, rate_hz: float = 5.0, transition_s: float = 0.5
                ) -> np.ndarray:
    """ZMP rows (2n, P) [m per parameter unit] of the motion at CAD (see the docstring)."""
    step = max(1, int(round(1.0 / (rate_hz * traj.dt))))
    keep = np.ones(len(traj.t), bool)
    change = np.zeros(len(traj.t), bool)
    for mask in traj.stance.values():
        change[1:] |= mask[1:] != mask[:-1]
    for k in np.flatnonzero(change):
        keep &= np.abs(traj.t - traj.t[k]) >= transition_s
    sel = np.flatnonzero(keep)[::step]
    return zmp_rows(traj.wrench[sel], traj.zmp_cad[sel], traj.fz_cad[sel])


def predict(robot: Robot, traj: DenseTrajectory, pi_cad: np.ndarray,
            param_set: str = 'grouped_sides', sigma_m: float = 7e-4, rate_hz: float = 10.0,
            inertia_spread: float = INERTIA_SPREAD) -> Prediction:
    """Predicted identifiability of ``traj`` (see the module docstring).

    Args:
        robot: Robot with link groups.
        traj: The motion on a dense grid with its CAD dynamics.
        pi_cad: CAD standard parameters.
        param_set: Core: 'grouped_sides', 'grouped' or 'reduced'.
        sigma_m: ZMP error of one decorrelated sample [m].
        rate_hz: Decorrelated samples per second [Hz].
        inertia_spread: Std of each link's inertia factor about its COM [-] (0: no bias).
    """
    rows = design_rows(traj, rate_hz)
    info = rows.T @ rows
    n = rows.shape[0]
    u = normal_uncertainty(robot, pi_cad, info, sigma_m ** 2 * n, n, core=param_set)
    bias = inertia_bias(robot, rows, u, pi_cad, param_set, inertia_spread)
    return prediction_of(u, n, bias)


def inertia_bias(robot: Robot, rows: np.ndarray, u: Uncertainty, pi_cad: np.ndarray,
                 param_set: str, spread: float) -> np.ndarray:
    """Per combination of ``u``, the RMS least-squares bias [core-scale units] from
    independent errors of std ``spread`` in every link's inertia about its COM."""
    from legid_ros.core.identification.uncertainty.core import _core_basis
    if spread <= 0:
        return np.zeros(len(u.combinations))
    _, _, jac, _, _ = _core_basis(robot, np.asarray(pi_cad, float), param_set)
    g = rows @ jac  # rows per core-scale unit
    vec = u.vectors  # (k, q) combinations in core-scale units (orthonormal)
    gv = g @ vec.T
    lam = np.einsum('ij,ij->j', gv, gv)
    resp = np.zeros((len(vec), robot.model.njoints - 1))
    for i in range(robot.model.njoints - 1):
        inertia = robot.model.inertias[i + 1]
        d = np.zeros(rows.shape[1])
        d[10 * i + 4:10 * i + 10] = pin.Inertia(0.0, np.zeros(3), inertia.inertia
                                                ).toDynamicParameters()[4:]
        resp[:, i] = (gv.T @ (rows @ d)) / np.maximum(lam, 1e-300)
    return spread * np.sqrt((resp ** 2).sum(axis=1))


def prediction_of(u: Uncertainty, n_rows: int = 0, bias=None) -> Prediction:
    """Determined combinations, share, soft count and log-det of an uncertainty (with the
    per-combination ``bias`` if given)."""
    tol = combination_tolerance(u)
    bias = np.zeros(len(tol)) if bias is None else np.asarray(bias, float)
    std = np.hypot(np.asarray(u.combination_total_std, float), bias)
    ok = std <= tol
    ratio = np.where(np.isfinite(std), tol / np.maximum(std, 1e-300), 0.0)
    soft = float(np.minimum(1.0, ratio ** 2).sum())
    log_det = float(np.sum(np.log(np.clip(ratio ** 2, 1e-12, None))))
    return Prediction(u, ok, bias, float(ok.mean()) if ok.size else 0.0, soft, log_det,
                      int(n_rows))
