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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List

import numpy as np

from legid_ros.core.excitation.trajectory import DenseTrajectory
from legid_ros.core.identification.rows.regressors import zmp_rows
from legid_ros.core.identification.uncertainty import Uncertainty, normal_uncertainty
from legid_ros.core.robot import Robot

MASS_TOL = 0.02  # [-] of the CAD mass
COM_TOL_M = 0.003  # [m]


@dataclass
class Prediction:
    """Predicted identifiability of a motion.

    Attributes:
        uncertainty: Predicted core uncertainty (combinations weakest first).
        determined: Per combination, std within its tolerance.
        fraction: Share of determined combinations [-].
        soft_count: ``sum min(1, (tol / std)^2)`` over the combinations (the design's
            objective: the count, made smooth).
        log_det: Log-determinant of the core information in tolerance units (mass plane).
        n_rows: ZMP rows behind it.
    """

    uncertainty: Uncertainty
    determined: np.ndarray
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
        order = np.argsort(u.combination_std / tol)
        for i in order[:top]:
            tag = 'ok  ' if self.determined[i] else 'POOR'
            out.append(f'  {tag} std {u.combination_std[i] / tol[i]:8.3g} x tolerance: '
                       f'{u.combinations[i]}')
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
    return np.asarray(u.combination_std, float) <= combination_tolerance(u)


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
            param_set: str = 'grouped_sides', sigma_m: float = 1.5e-3, rate_hz: float = 5.0
            ) -> Prediction:
    """Predicted identifiability of ``traj`` (see the module docstring).

    Args:
        robot: Robot with link groups.
        traj: The motion on a dense grid with its CAD dynamics.
        pi_cad: CAD standard parameters.
        param_set: Core: 'grouped_sides', 'grouped' or 'reduced'.
        sigma_m: ZMP error of one decorrelated sample [m].
        rate_hz: Decorrelated samples per second [Hz].
    """
    rows = design_rows(traj, rate_hz)
    info = rows.T @ rows
    n = rows.shape[0]
    u = normal_uncertainty(robot, pi_cad, info, sigma_m ** 2 * n, n, core=param_set)
    return prediction_of(u, n)


def prediction_of(u: Uncertainty, n_rows: int = 0) -> Prediction:
    """Determined combinations, share, soft count and log-det of an uncertainty."""
    tol = combination_tolerance(u)
    std = np.asarray(u.combination_std, float)
    ok = std <= tol
    ratio = np.where(np.isfinite(std), tol / np.maximum(std, 1e-300), 0.0)
    soft = float(np.minimum(1.0, ratio ** 2).sum())
    log_det = float(np.sum(np.log(np.clip(ratio ** 2, 1e-12, None))))
    return Prediction(u, ok, float(ok.mean()) if ok.size else 0.0, soft, log_det, int(n_rows))
