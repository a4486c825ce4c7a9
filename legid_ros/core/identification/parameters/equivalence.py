"""Parameter sets the ZMP cannot tell apart from the truth (the ZMP reduced set).

On single-support data the model ZMP of the ZMP reduced set (Wu & Gao 2021) is *exactly* invariant
along one curve through every parameter point: mass moved between thigh, shank and foot (and a
little trunk) together with their axial COM offsets (at the truth of Wu & Gao's Table 2 the tangent
is
``+1 m_thigh - 0.84 m_shank - 0.18 m_foot + 0.05 m_trunk`` kg with ``+10.6 lc_thigh
+28 lc_shank +11 lc_foot`` mm per kg). The curve does not depend on the motion: it is a
redistribution the rigid-body dynamics cannot see (point mass across the knee and ankle
joints, to first order), so no excitation and no amount of data locates an estimate along it;
only a prior (CAD, primitive geometry, a scale) does.

:func:`equivalent_reduced` finds the point of that curve with a given thigh mass, by fitting
the ZMP the reference parameters produce on a set of regressors (noise-free by construction).
Comparing an estimate with the equivalent point of the truth at the estimate's thigh mass
gives its error *in the identifiable directions*.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares

from legid_ros.core.identification.parameters.sets import ReducedSet
from legid_ros.core.identification.rows.zmp import model_zmp


@dataclass
class Equivalent:
    """A reduced set with (nearly) the same model ZMP as the reference.

    Attributes:
        x: Reduced parameters (lc [m] per group, then masses [kg]).
        zmp_rms_m: RMS difference of its model ZMP from the reference's [m].
    """

    x: np.ndarray
    zmp_rms_m: float


def equivalent_reduced(wrench: np.ndarray, x_ref: np.ndarray, red: ReducedSet,
                       fixed: dict) -> Equivalent:
    """Reduced set with the reference's total mass and model ZMP and the ``fixed`` values.

    Args:
        wrench: (N, 6, P) world wrench regressors of any motion.
        x_ref: Reference reduced parameters (e.g. the truth).
        red: The reduced parameterisation (its first mass is eliminated by the total mass).
        fixed: Index in ``x`` -> imposed value (e.g. ``{5: m_thigh}``).

    Returns:
        :class:`Equivalent`; ``zmp_rms_m`` ~ 1e-15 m along the exact invariance curve.
    """
    x_ref = np.asarray(x_ref, float)
    g = red.n_groups
    c = red.mass_row()
    total = float(c @ x_ref)
    z_ref = model_zmp(wrench, red.to_standard(x_ref))[0]
    free = [i for i in range(x_ref.size) if i != g and i not in fixed]

    def full(y):
        x = x_ref.copy()
        x[free] = y
        for i, v in fixed.items():
            x[i] = v
        x[g] = (total - c[g + 1:] @ x[g + 1:]) / c[g]
        return x

    def resid(y):
        return (model_zmp(wrench, red.to_standard(full(y)))[0] - z_ref).ravel()
    sol = least_squares(resid, x_ref[free], method='lm', xtol=1e-15, ftol=1e-15, gtol=1e-15)
    return Equivalent(full(sol.x), float(np.sqrt(np.mean(sol.fun ** 2))))


def error_mod_invariance(wrench: np.ndarray, x_est: np.ndarray, x_true: np.ndarray,
                         red: ReducedSet) -> dict:
    """Errors of an estimate against the truth's equivalent point at the same thigh mass.

    Returns:
        ``{'mass_err_pct': (groups,), 'com_err_mm': (groups,), 'x_equivalent': x,
        'zmp_rms_m': float, 'thigh_offset_kg': m_thigh estimate - truth}``.
    """
    g = red.n_groups
    eq = equivalent_reduced(wrench, x_true, red, {g + 1: float(x_est[g + 1])})
    return {'mass_err_pct': 100 * (x_est[g:] - eq.x[g:]) / eq.x[g:],
            'com_err_mm': 1e3 * (x_est[:g] - eq.x[:g]), 'x_equivalent': eq.x,
            'zmp_rms_m': eq.zmp_rms_m, 'thigh_offset_kg': float(x_est[g + 1] - x_true[g + 1])}


@dataclass
class Signature:
    """How much each direction of the reduced set moves the model ZMP.

    Attributes:
        rms_m: RMS change of the model ZMP [m] per scale unit (2 cm of COM, 20 % of a mass)
            along each direction of the total-mass plane, weakest first.
        directions: Each direction in scale units (max-abs component 1).
        names: Reduced parameter names.
    """

    rms_m: np.ndarray
    directions: np.ndarray
    names: list

    def lines(self) -> list:
        """Readable list, weakest first."""
        from legid_ros.core.identification.identifiability import describe
        return [f'{r * 1e6:9.3g} um per scale unit: {describe(d, self.names, 4)}'
                for r, d in zip(self.rms_m, self.directions)]


def zmp_signature(wrench: np.ndarray, x: np.ndarray, red: ReducedSet) -> Signature:
    """ZMP sensitivity of the reduced set at ``x`` on a motion (regressors ``wrench``).

    The singular values of ``d zmp / d x`` (scaled, on the total-mass plane) divided by
    ``sqrt(2 N)``: the RMS ZMP change a one-scale-unit move along each direction causes. Compare
    with the ZMP noise floor over ``sqrt(N)`` samples to see whether the data can locate it.
    """
    from scipy.linalg import null_space

    from legid_ros.core.identification.rows.zmp import zmp_derivatives
    x = np.asarray(x, float)
    grads = zmp_derivatives(wrench, red.to_standard(x), hessian=False)[1]
    s = red.scales()
    jac = grads.reshape(-1, grads.shape[2]) @ red.jacobian(x) * s[None, :]
    c = red.mass_row() * s
    z = null_space(c[None, :] / np.linalg.norm(c))
    _, sv, vt = np.linalg.svd(jac @ z, full_matrices=False)
    dirs = (z @ vt.T).T
    dirs /= np.abs(dirs).max(axis=1, keepdims=True)
    order = np.argsort(sv)
    return Signature(sv[order] / np.sqrt(jac.shape[0]), dirs[order], list(red.names))
