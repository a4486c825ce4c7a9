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
        """Standard parameter vector ``pi(Phi)`` (all members at once).

        Per member ``pi = [m, m lc a, vech(I_c) + m lc^2 vech(S_a)]``, ``S_a = (a.a) I - a a^T``.
        """
        phi = self._check(phi)
        grp, rows, axis = self._member_arrays()
        i_com, s_axis = self._vech_arrays()
        lc = phi[grp]  # [m]
        m = phi[self.n_groups + grp]  # [kg]
        pi = self.pi_cad.copy()
        pi[rows] = np.hstack([m[:, None], (m * lc)[:, None] * axis,
                              i_com + (m * lc * lc)[:, None] * s_axis])
        return pi

    def jacobian(self, phi: np.ndarray) -> np.ndarray:
        """``d pi / d Phi``, shape (len(pi), size) (all members at once): ``d pi / dm = [1,
        lc a, lc^2 vech(S_a)]``, ``d pi / dlc = [0, m a, 2 m lc vech(S_a)]``."""
        phi = self._check(phi)
        grp, rows, axis = self._member_arrays()
        _, s_axis = self._vech_arrays()
        lc = phi[grp]  # [m]
        m = phi[self.n_groups + grp]  # [kg]
        d_m = np.hstack([np.ones((grp.size, 1)), lc[:, None] * axis,
                         (lc * lc)[:, None] * s_axis])
        d_lc = np.hstack([np.zeros((grp.size, 1)), m[:, None] * axis,
                          (2 * m * lc)[:, None] * s_axis])
        jac = np.zeros((self.pi_cad.size, self.size))
        jac[rows, (self.n_groups + grp)[:, None]] = d_m  # one member per link: no overlap
        jac[rows, grp[:, None]] = d_lc
        return jac

    def _vech_arrays(self):
        """(CAD inertia about the COM (M, 6) [kg.m^2], ``vech(S_a)`` (M, 6)) of the members,
        in the order xx, xy, yy, xz, yz, zz, built once."""
        if getattr(self, '_vech', None) is None:
            vech = (np.array([0, 0, 1, 0, 1, 2]), np.array([0, 1, 1, 2, 2, 2]))
            axis = self._member_arrays()[2]
            s_axis = (np.einsum('mi,mi->m', axis, axis)[:, None, None] * np.eye(3)
                      - np.einsum('mi,mj->mij', axis, axis))
            i_com = np.array([mem.inertia_com for mem in self.members], float).reshape(-1, 3, 3)
            self._vech = (i_com[:, vech[0], vech[1]], s_axis[:, vech[0], vech[1]])
        return self._vech

    def curvature(self, phi: np.ndarray, g: np.ndarray) -> np.ndarray:
        """``sum_k g_k d2 pi_k / dPhi2`` (analytic; Newton's Hessian term).

        Per member, ``pi = [m, m lc a, I_c + m lc^2 S_a]`` with ``S_a = (a.a) I - a a^T``:
        ``d2 pi / dm dlc = [0, a, 2 lc S_a]``, ``d2 pi / dlc2 = [0, 0, 2 m S_a]``, and
        ``d2 pi / dm2 = 0``.
        """
        phi = self._check(phi)
        g = np.asarray(g, float)
        grp, rows, axis = self._member_arrays()
        lc = phi[grp]  # [m]
        m = phi[self.n_groups + grp]  # [kg]
        sa = np.einsum('mi,mi->m', axis, axis)[:, None, None] * np.eye(3) - np.einsum(
            'mi,mj->mij', axis, axis)
        vech = (np.array([0, 0, 1, 0, 1, 2]), np.array([0, 1, 1, 2, 2, 2]))
        gr = g[rows]  # (M, 10)
        g_s = np.einsum('mk,mk->m', gr[:, 4:], sa[:, vech[0], vech[1]])
        mixed = np.einsum('mi,mi->m', gr[:, 1:4], axis) + 2 * lc * g_s
        out = np.zeros((self.size, self.size))
        np.add.at(out, (grp, grp), 2 * m * g_s)
        np.add.at(out, (grp, self.n_groups + grp), mixed)
        np.add.at(out, (self.n_groups + grp, grp), mixed)
        return out

    def _member_arrays(self):
        """(group (M,), rows of pi (M, 10), axis (M, 3)) of the members, built once."""
        if getattr(self, '_arrays', None) is None:
            grp = np.array([mem.group for mem in self.members], int)
            rows = np.array([PARAMS_PER_LINK * mem.index + np.arange(PARAMS_PER_LINK)
                             for mem in self.members], int).reshape(-1, PARAMS_PER_LINK)
            axis = np.array([mem.axis for mem in self.members], float).reshape(-1, 3)
            self._arrays = (grp, rows, axis)
        return self._arrays

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
