"""The ZMP reduced set (Wu & Gao 2021): symmetric legs, axial COM, masses.

``Phi = [lc_0, .., lc_{G-1}, m_0, .., m_{G-1}]`` over the description's link groups (trunk,
thigh, shank, foot for the biped): each link in group g has COM ``lc_g * axis_g`` [m] and mass
``m_g`` [kg]; its inertia about the COM stays at the CAD value (slow balanced motion does not
excite it). Links outside every group keep their CAD parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List

import numpy as np

from legid_ros.core.errors import BadInputError, RobotDescriptionError
from legid_ros.core.inertial import PARAMS_PER_LINK, get_parameters, link_index, unpack
from legid_ros.core.robot import Robot


@dataclass
class _Member:
    group: int
    index: int  # body index in the stacked vector
    axis: np.ndarray
    inertia_com: np.ndarray  # [kg.m^2]


class ReducedParameterization:
    """Map between the ZMP reduced set ``Phi`` and the standard parameters ``pi``.

    Args:
        robot: Robot whose description has ``link_groups``.
        pi_cad: Standard parameters used for the links outside the groups and for the
            inertias about the COM (default: the model's current parameters).
    """

    def __init__(self, robot: Robot, pi_cad: np.ndarray = None):
        if not robot.link_groups:
            raise RobotDescriptionError(f'robot {robot.name!r} has no link_groups')
        self.groups = list(robot.link_groups.values())
        self.pi_cad = get_parameters(robot.model) if pi_cad is None else np.array(pi_cad)
        self.members: List[_Member] = []
        for g, group in enumerate(self.groups):
            for link in group.links:
                idx = link_index(robot.model, link)
                m, h, i_o = unpack(self.pi_cad[PARAMS_PER_LINK * idx:PARAMS_PER_LINK * (idx + 1)])
                c = h / m
                i_c = i_o - m * (c @ c * np.eye(3) - np.outer(c, c))
                self.members.append(_Member(g, idx, group.axis, i_c))
        self.n_groups = len(self.groups)
        self.fixed_mass = float(robot.total_mass - sum(
            self.pi_cad[PARAMS_PER_LINK * mem.index] for mem in self.members))

    @property
    def names(self) -> List[str]:
        """``lc<i>`` then ``m<i>``, with the group names in brackets' place: lc_trunk, ..."""
        return ([f'lc_{g.name}' for g in self.groups] + [f'm_{g.name}' for g in self.groups])

    @property
    def size(self) -> int:
        """Number of reduced parameters (2 per group)."""
        return 2 * self.n_groups

    def cad(self) -> np.ndarray:
        """CAD values of Phi: [lc [m] ..., m [kg] ...]."""
        return np.array([g.lc_cad for g in self.groups] + [g.mass_cad for g in self.groups])

    def mass_row(self) -> np.ndarray:
        """Row ``c`` such that ``c . Phi`` is the grouped links' total mass [kg]."""
        c = np.zeros(self.size)
        for mem in self.members:
            c[self.n_groups + mem.group] += 1.0
        return c

    def _check(self, phi):
        phi = np.asarray(phi, float)
        if phi.shape != (self.size,):
            raise BadInputError(f'Phi has shape {phi.shape}, expected ({self.size},)')
        return phi

    def to_standard(self, phi: np.ndarray) -> np.ndarray:
        """Standard parameter vector ``pi(Phi)``."""
        phi = self._check(phi)
        pi = self.pi_cad.copy()
        for mem in self.members:
            lc, m = phi[mem.group], phi[self.n_groups + mem.group]
            c = lc * mem.axis
            i_o = mem.inertia_com + m * (c @ c * np.eye(3) - np.outer(c, c))
            pi[PARAMS_PER_LINK * mem.index:PARAMS_PER_LINK * (mem.index + 1)] = [
                m, *(m * c), i_o[0, 0], i_o[0, 1], i_o[1, 1], i_o[0, 2], i_o[1, 2], i_o[2, 2]]
        return pi

    def jacobian(self, phi: np.ndarray) -> np.ndarray:
        """``d pi / d Phi``, shape (len(pi), size)."""
        phi = self._check(phi)
        jac = np.zeros((self.pi_cad.size, self.size))
        for mem in self.members:
            g = mem.group
            lc, m = phi[g], phi[self.n_groups + g]
            a = mem.axis
            c = lc * a
            s = c @ c * np.eye(3) - np.outer(c, c)
            ds = 2 * lc * (a @ a * np.eye(3) - np.outer(a, a))
            rows = slice(PARAMS_PER_LINK * mem.index, PARAMS_PER_LINK * (mem.index + 1))
            d_m = [1.0, *c, s[0, 0], s[0, 1], s[1, 1], s[0, 2], s[1, 2], s[2, 2]]
            d_lc = [0.0, *(m * a), *(m * np.array([ds[0, 0], ds[0, 1], ds[1, 1], ds[0, 2],
                                                   ds[1, 2], ds[2, 2]]))]
            jac[rows, self.n_groups + g] += d_m
            jac[rows, g] += d_lc
        return jac

    def from_standard(self, pi: np.ndarray) -> np.ndarray:
        """Best reduced set for a standard vector: group-mean masses and axial COM offsets."""
        pi = np.asarray(pi, float)
        lc = np.zeros(self.n_groups)
        mass = np.zeros(self.n_groups)
        count = np.zeros(self.n_groups)
        for mem in self.members:
            m, h, _ = unpack(pi[PARAMS_PER_LINK * mem.index:PARAMS_PER_LINK * (mem.index + 1)])
            mass[mem.group] += m
            lc[mem.group] += (h / m) @ mem.axis if m > 0 else 0.0
            count[mem.group] += 1
        return np.concatenate([lc / count, mass / count])
