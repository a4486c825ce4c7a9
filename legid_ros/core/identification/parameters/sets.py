"""Parameterisations ``pi = pi(x)`` of the standard inertial parameters.

Every identification method works on some ``x``: the standard set itself, the ZMP reduced set of Wu
& Gao 2021 (axial COM + mass per link group), the grouped set (mass + 3-D COM per link group or
group side, :mod:`.grouped`), or point masses. Each class gives ``to_standard(x)``,
``jacobian(x) = d pi / d x``, ``curvature(x, g) = sum_k g_k d2 pi_k / dx2`` (for Newton's Hessian),
``names``, ``cad()`` and ``mass_row()`` (``mass_row() . x`` + ``fixed_mass`` is the total mass
[kg]).
"""

from __future__ import annotations

from typing import List, Optional

import numpy as np

from legid_ros.core.inertial import PARAMS_PER_LINK, get_parameters, parameter_names, unpack
from legid_ros.core.identification.parameters.grouped import GroupedSet
from legid_ros.core.identification.parameters.reduced import ReducedParameterization
from legid_ros.core.robot import Robot

__all__ = ['GroupedSet', 'ReducedSet', 'StandardSet', 'point_mass_parameters']


def point_mass_parameters(pi: np.ndarray) -> np.ndarray:
    """Same masses and COMs, zero inertia about each COM (Wu & Gao's point-mass form)."""
    out = np.array(pi, float)
    for i in range(out.size // PARAMS_PER_LINK):
        m, h, _ = unpack(out[PARAMS_PER_LINK * i:PARAMS_PER_LINK * (i + 1)])
        i_o = (h @ h * np.eye(3) - np.outer(h, h)) / m if m > 0 else np.zeros((3, 3))
        out[PARAMS_PER_LINK * i + 4:PARAMS_PER_LINK * (i + 1)] = [
            i_o[0, 0], i_o[0, 1], i_o[1, 1], i_o[0, 2], i_o[1, 2], i_o[2, 2]]
    return out


class StandardSet:
    """Identity parameterisation: ``x = pi`` (10 per moving body).

    Args:
        robot: Robot (CAD from its model).
        pi_cad: CAD parameters (default: the model's).
    """

    linear = True

    def __init__(self, robot: Robot, pi_cad: Optional[np.ndarray] = None):
        self.pi_cad = get_parameters(robot.model) if pi_cad is None else np.array(pi_cad, float)
        self.names: List[str] = parameter_names(robot.model)
        self.link_names = robot.body_names
        self.size = self.pi_cad.size
        self.fixed_mass = 0.0

    def to_standard(self, x: np.ndarray) -> np.ndarray:
        """``pi(x) = x``."""
        return np.asarray(x, float)

    def jacobian(self, x: np.ndarray) -> np.ndarray:
        """Identity."""
        return np.eye(self.size)

    def curvature(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Zero: the map is linear."""
        return np.zeros((self.size, self.size))

    def cad(self) -> np.ndarray:
        """CAD standard parameters."""
        return self.pi_cad.copy()

    def from_standard(self, pi: np.ndarray) -> np.ndarray:
        """``x`` of a standard vector (itself)."""
        return np.asarray(pi, float).copy()

    def mass_row(self) -> np.ndarray:
        """Row picking every link mass."""
        c = np.zeros(self.size)
        c[::PARAMS_PER_LINK] = 1.0
        return c

    def scales(self) -> np.ndarray:
        """Typical magnitude of each parameter (for regularisation and conditioning).

        Mass: 20 % of the CAD mass + 0.05 kg; first moment: CAD mass x 0.02 m + 1e-3 kg.m;
        inertia: 30 % of the link's largest CAD moment + 1e-4 kg.m^2.
        """
        s = np.zeros(self.size)
        for i in range(self.size // PARAMS_PER_LINK):
            m, h, i_o = unpack(self.pi_cad[PARAMS_PER_LINK * i:PARAMS_PER_LINK * (i + 1)])
            base = PARAMS_PER_LINK * i
            s[base] = 0.2 * m + 0.05
            s[base + 1:base + 4] = 0.02 * m + 1e-3
            s[base + 4:base + 10] = 0.3 * np.abs(np.diag(i_o)).max() + 1e-4
        return s


class ReducedSet:
    """The ZMP reduced set ``[lc_g..., m_g...]`` of Wu & Gao 2021 (see :mod:`.reduced`).

    Args:
        robot: Robot with ``link_groups``.
        pi_cad: CAD parameters (default: the model's).
        point_mass: Zero every inertia about the COM (Wu & Gao's point-mass model).
        lc_scale: Scale (prior spread) of each axial COM offset [m].
        mass_scale: Scale of each mass, as a fraction of its CAD value.
    """

    linear = False

    def __init__(self, robot: Robot, pi_cad: Optional[np.ndarray] = None,
                 point_mass: bool = False, lc_scale: float = 0.02, mass_scale: float = 0.2):
        base = get_parameters(robot.model) if pi_cad is None else np.array(pi_cad, float)
        if point_mass:
            base = point_mass_parameters(base)
        self.red = ReducedParameterization(robot, base)
        self.pi_cad = base
        self.names = self.red.names
        self.size = self.red.size
        self.fixed_mass = self.red.fixed_mass
        self.link_names = robot.body_names
        self.n_groups = self.red.n_groups
        self.lc_scale, self.mass_scale = float(lc_scale), float(mass_scale)

    def to_standard(self, x: np.ndarray) -> np.ndarray:
        """Standard parameters of ``x``."""
        return self.red.to_standard(x)

    def jacobian(self, x: np.ndarray) -> np.ndarray:
        """``d pi / d x`` (analytic)."""
        return self.red.jacobian(x)

    def curvature(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        """``sum_k g_k d2 pi_k / dx2`` (analytic, :meth:`.reduced.ReducedParameterization.
        curvature`)."""
        return self.red.curvature(x, g)

    def cad(self) -> np.ndarray:
        """CAD reduced parameters."""
        return self.red.cad()

    def from_standard(self, pi: np.ndarray) -> np.ndarray:
        """Reduced parameters of a standard vector (group means)."""
        return self.red.from_standard(pi)

    def mass_row(self) -> np.ndarray:
        """Row giving the grouped mass; add ``fixed_mass`` for the total."""
        return self.red.mass_row()

    def scales(self) -> np.ndarray:
        """Typical magnitudes: ``lc_scale`` for each lc, ``mass_scale`` x CAD for each mass."""
        cad = self.cad()
        return np.concatenate([np.full(self.n_groups, self.lc_scale),
                               self.mass_scale * cad[self.n_groups:]])
