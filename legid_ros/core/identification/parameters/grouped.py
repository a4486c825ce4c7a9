"""The grouped set: mass and full 3-D COM per link group, symmetric or per side.

The ZMP reduced set of Wu & Gao 2021 (:mod:`.reduced`) gives every link group one mass and a
COM only along the link axis, with both legs alike; real links have COMs off any single axis
and left and right legs differ (a sensor box on one shank). The grouped set keeps the groups
and frees what real links need::

    x = [m_u, cx_u, cy_u, cz_u (, Ixx_u, Ixy_u, Iyy_u, Ixz_u, Iyz_u, Izz_u)] for every unit u

A *unit* is a link group (``symmetric``: left and right links share it, the right link's COM
mirrored across the sagittal plane) or one side of it (``per_side``: ``left_thigh`` and
``right_thigh`` separate). Sides come from the link names (``l_``/``left_`` prefixes,
``_l``/``_left`` suffixes, same for right); links without a side (the trunk) form their own
unit. The sagittal plane is the base's x-z plane at the neutral configuration (REP 103: y to
the left). The COM ``c_u`` [m] is in the frame of the unit's left (or unsided) links; a right
link's COM is ``M c_u`` with ``M = R_r^T S R_l`` the mirror ``S`` across the sagittal plane
between the neutral orientations of the right link and its left partner (same name with the
side swapped; its own orientation if none). The inertia about each link's COM stays at its
CAD value (slow balanced motion barely excites it); ``identify_inertia=True`` adds the six
entries of the unit's inertia about the COM (mirrored as ``M I M^T``).

**Physical consistency.** With the inertia held, every ``x`` whose masses are positive maps to
links that are rigid bodies: ``pi_link = pack(m, c, I_c,CAD)`` with ``m > 0`` and ``I_c,CAD``
positive definite with the triangle inequalities, by the parallel-axis theorem. The default
bounds (:func:`grouped_bounds`) keep every mass in [0.2, 3] x CAD, so every solution of a
bounded solver is consistent. With ``identify_inertia`` this guarantee is lost (the bounds
keep the diagonal positive, not the triangle inequalities): check the result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError, RobotDescriptionError
from legid_ros.core.inertial import PARAMS_PER_LINK, get_parameters, link_index, unpack
from legid_ros.core.robot import Robot

SIDE_PATTERNS = {'left': (r'^(l|left)_', r'_(l|left)$'), 'right': (r'^(r|right)_', r'_(r|right)$')}
_VECH = ([0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2])  # ixx ixy iyy ixz iyz izz


def link_side(name: str) -> Optional[str]:
    """'left', 'right' or None from a link name (``l_thigh``, ``left_foot``, ``shank_r``)."""
    low = name.lower()
    for side, pats in SIDE_PATTERNS.items():
        if any(re.search(p, low) for p in pats):
            return side
    return None


def _swap_side(name: str) -> str:
    """The partner's name: the side token of ``name`` swapped (``r_thigh`` -> ``l_thigh``)."""
    for a, b in (('right', 'left'), ('r', 'l')):
        for pat, rep in ((rf'^{a}_', f'{b}_'), (rf'_{a}$', f'_{b}')):
            if re.search(pat, name, flags=re.IGNORECASE):
                return re.sub(pat, rep, name, flags=re.IGNORECASE)
    return name


def _cad_mirror(robot: Robot, pi_cad: np.ndarray, rot: Dict[str, np.ndarray], ref: str,
                link: str, s_sagittal: np.ndarray) -> np.ndarray:
    """Map of a link's COM from its group's first link, for groups whose names carry no side.

    Among the identity and the mirrors across the sagittal plane, the frontal plane and both
    (in the base frame at the neutral configuration), the one that sends the first link's CAD
    COM offset onto this link's; returned in the links' own frames (``R_l^T S R_ref``).
    """
    s_frontal = np.diag([-1.0, 1.0, 1.0])
    coms = {}
    for name in (ref, link):
        i = link_index(robot.model, name)
        m, h, _ = unpack(pi_cad[PARAMS_PER_LINK * i:PARAMS_PER_LINK * (i + 1)])
        coms[name] = rot[name] @ (h / m)
    best = min((np.eye(3), s_sagittal, s_frontal, s_sagittal @ s_frontal),
               key=lambda s: float(np.linalg.norm(s @ coms[ref] - coms[link])))
    return rot[link].T @ best @ rot[ref]


def _sym(v: np.ndarray) -> np.ndarray:
    """3x3 symmetric matrix of the 6 entries ``[xx, xy, yy, xz, yz, zz]``."""
    return np.array([[v[0], v[1], v[3]], [v[1], v[2], v[4]], [v[3], v[4], v[5]]])


def _parallel(c: np.ndarray) -> np.ndarray:
    """``c.c I - c c^T`` (the parallel-axis term per unit mass) [m^2]."""
    return c @ c * np.eye(3) - np.outer(c, c)


def _parallel_batch(c: np.ndarray) -> np.ndarray:
    """:func:`_parallel` of each row of ``c`` (M, 3) -> (M, 3, 3) [m^2]."""
    return (np.einsum('mi,mi->m', c, c)[:, None, None] * np.eye(3)
            - np.einsum('mi,mj->mij', c, c))


def _vech_grad_basis() -> np.ndarray:
    """``E`` (3, 6, 3) with ``d vech(S(c)) / dc = sum_k c_k E[k]`` (``S`` of :func:`_parallel`,
    vech order xx, xy, yy, xz, yz, zz): the derivative is linear in ``c``."""
    e = np.zeros((3, 6, 3))
    for row, k, j, v in ((0, 1, 1, 2), (0, 2, 2, 2), (1, 1, 0, -1), (1, 0, 1, -1),
                         (2, 0, 0, 2), (2, 2, 2, 2), (3, 2, 0, -1), (3, 0, 2, -1),
                         (4, 2, 1, -1), (4, 1, 2, -1), (5, 0, 0, 2), (5, 1, 1, 2)):
        e[k, row, j] = v
    return e


_VECH_GRAD = _vech_grad_basis()


def _q_of_vech() -> np.ndarray:
    """``T`` (6, 9) with ``Q = tr(G) I - G`` = ``(v @ T).reshape(3, 3)`` for the vech ``v`` of
    a gradient (``G`` symmetric with ``tr(G X) = v . vech(X)``: off-diagonal entries halved)."""
    t = np.zeros((6, 9))
    for k, (i, j) in enumerate(zip(*_VECH)):
        w = 1.0 if i == j else 0.5
        t[k, 3 * i + j] -= w
        if i != j:
            t[k, 3 * j + i] -= w
        else:
            t[k, [0, 4, 8]] += 1.0
    return t


_Q_OF_VECH = _q_of_vech()


def _parallel_vech_grad(c: np.ndarray) -> np.ndarray:
    """``d vech(_parallel(c)) / dc`` for each row of ``c`` (M, 3) -> (M, 6, 3) [m]."""
    return np.einsum('mk,kij->mij', c, _VECH_GRAD)


def _parallel_vech(c: np.ndarray, grad: Optional[np.ndarray] = None) -> np.ndarray:
    """``vech`` of :func:`_parallel` for each row of ``c`` (M, 3) -> (M, 6) [m^2]: half its
    gradient times ``c`` (it is homogeneous of degree 2); ``grad`` that gradient if known."""
    grad = _parallel_vech_grad(c) if grad is None else grad
    return 0.5 * np.einsum('mij,mj->mi', grad, c)


@dataclass
class _Member:
    unit: int
    index: int  # body index in the stacked vector
    mirror: np.ndarray  # link COM = mirror @ c_unit
    inertia_com: np.ndarray  # CAD inertia about the COM, link frame [kg.m^2]


class GroupedSet:
    """Mass and 3-D COM per link group (or group side); see the module docstring.

    Args:
        robot: Robot whose description has ``link_groups``.
        pi_cad: CAD standard parameters (default: the model's).
        per_side: Left and right links of a group are separate units.
        identify_inertia: Also identify the inertia about the COM (6 per unit); physical
            consistency is then not guaranteed.
        com_scale: Prior spread of each COM coordinate [m].
        mass_scale: Prior spread of each mass, as a fraction of its CAD value.
    """

    linear = False

    def __init__(self, robot: Robot, pi_cad: Optional[np.ndarray] = None,
                 per_side: bool = False, identify_inertia: bool = False,
                 com_scale: float = 0.02, mass_scale: float = 0.2):
        if not robot.link_groups:
            raise RobotDescriptionError(f'robot {robot.name!r} has no link_groups')
        self.pi_cad = get_parameters(robot.model) if pi_cad is None else np.array(pi_cad, float)
        self.per_side, self.identify_inertia = bool(per_side), bool(identify_inertia)
        self.com_scale, self.mass_scale = float(com_scale), float(mass_scale)
        self.link_names = robot.body_names
        self.width = 10 if self.identify_inertia else 4
        self.units: List[str] = []
        self.unit_group: List[str] = []
        self.members: List[_Member] = []
        rot = self._neutral_rotations(robot)
        flip = np.diag([1.0, -1.0, 1.0])
        s_world = rot[robot.base_link] @ flip @ rot[robot.base_link].T \
            if robot.base_link in rot else flip
        for gname, group in robot.link_groups.items():
            named = all(link_side(link) for link in group.links) or len(group.links) == 1
            for link in group.links:
                side = link_side(link)
                unit = f'{side}_{gname}' if self.per_side and side else gname
                if self.per_side and not named:
                    unit = link  # sides the names do not tell (leg_left_1_link, FL_HIP): a link
                if unit not in self.units:
                    self.units.append(unit)
                    self.unit_group.append(gname)
                mirror = np.eye(3)
                if side == 'right' and not self.per_side:
                    partner = _swap_side(link)
                    r_l = rot.get(partner, rot[link])
                    mirror = rot[link].T @ s_world @ r_l
                elif not named and not self.per_side and link != group.links[0]:
                    mirror = _cad_mirror(robot, self.pi_cad, rot, group.links[0], link,
                                         s_world)
                idx = link_index(robot.model, link)
                m, h, i_o = unpack(self.pi_cad[PARAMS_PER_LINK * idx:PARAMS_PER_LINK * (idx + 1)])
                c = h / m
                self.members.append(_Member(self.units.index(unit), idx, mirror,
                                            i_o - m * _parallel(c)))
        self.n_groups = len(self.units)
        self.fixed_mass = float(robot.total_mass - sum(
            self.pi_cad[PARAMS_PER_LINK * mem.index] for mem in self.members))
        self.size = self.width * self.n_groups
        fields = ['m', 'cx', 'cy', 'cz'] + (
            ['Ixx', 'Ixy', 'Iyy', 'Ixz', 'Iyz', 'Izz'] if self.identify_inertia else [])
        self.names: List[str] = [f'{f}_{u}' for u in self.units for f in fields]
        self._x_cad = self.from_standard(self.pi_cad)

    @staticmethod
    def _neutral_rotations(robot: Robot) -> Dict[str, np.ndarray]:
        """World orientation of every link frame at the neutral configuration."""
        data = robot.model.createData()
        pin.framesForwardKinematics(robot.model, data, robot.neutral())
        out = {}
        for link in robot.body_names + [robot.base_link]:
            if robot.model.existFrame(link):
                out[link] = np.array(data.oMf[robot.model.getFrameId(link)].rotation)
        return out

    # ---- the map pi(x) ----

    def _check(self, x) -> np.ndarray:
        x = np.asarray(x, float)
        if x.shape != (self.size,):
            raise BadInputError(f'grouped x has shape {x.shape}, expected ({self.size},)')
        return x

    def _unit(self, x: np.ndarray, u: int) -> Tuple[float, np.ndarray, Optional[np.ndarray]]:
        seg = x[self.width * u:self.width * (u + 1)]
        return float(seg[0]), seg[1:4], (_sym(seg[4:10]) if self.identify_inertia else None)

    def _arrays(self):
        """Per member (unit, rows of pi (M, 10), mirror (M, 3, 3), CAD inertia about the COM
        (M, 3, 3), d vech(A X A^T) / d vech(X) (M, 6, 6)), built once."""
        if getattr(self, '_member_arrays', None) is None:
            unit = np.array([mem.unit for mem in self.members], int)
            rows = np.array([PARAMS_PER_LINK * mem.index + np.arange(PARAMS_PER_LINK)
                             for mem in self.members], int).reshape(-1, PARAMS_PER_LINK)
            mirror = np.array([mem.mirror for mem in self.members], float).reshape(-1, 3, 3)
            i_com = np.array([mem.inertia_com for mem in self.members], float).reshape(-1, 3, 3)
            d_inertia = np.array([[(a @ _sym(e) @ a.T)[_VECH] for e in np.eye(6)]
                                  for a in mirror]).transpose(0, 2, 1).reshape(-1, 6, 6)
            self._member_arrays = (unit, rows, mirror, i_com, d_inertia)
        return self._member_arrays

    def _unit_values(self, x: np.ndarray):
        """Per member: mass (M,) [kg], unit COM (M, 3) [m], link COM (M, 3) [m]."""
        unit, _, mirror, _, _ = self._arrays()
        seg = x.reshape(self.n_groups, self.width)[unit]
        cu = seg[:, 1:4]
        return seg[:, 0], cu, np.einsum('mij,mj->mi', mirror, cu)

    def to_standard(self, x: np.ndarray) -> np.ndarray:
        """Standard parameters ``pi(x)`` (links outside the groups at CAD)."""
        x = self._check(x)
        unit, rows, mirror, i_com, _ = self._arrays()
        m, _, c = self._unit_values(x)
        if self.identify_inertia:
            iu = np.array([_sym(v) for v in x.reshape(self.n_groups, self.width)[unit, 4:10]])
            i_c = np.einsum('mij,mjk,mlk->mil', mirror, iu.reshape(-1, 3, 3),
                            mirror)[:, _VECH[0], _VECH[1]]
        else:
            i_c = self._inertia_com_vech()
        pi = self.pi_cad.copy()
        pi[rows] = np.hstack([m[:, None], m[:, None] * c, i_c + m[:, None] * _parallel_vech(c)])
        return pi

    def _inertia_com_vech(self) -> np.ndarray:
        """CAD inertias about the COM of the members, ``vech`` (M, 6) [kg.m^2], built once."""
        if getattr(self, '_i_com_vech', None) is None:
            self._i_com_vech = self._arrays()[3][:, _VECH[0], _VECH[1]]
        return self._i_com_vech

    def jacobian(self, x: np.ndarray) -> np.ndarray:
        """``d pi / d x`` (analytic, all members at once), shape (len(pi), size)."""
        x = self._check(x)
        unit, rows, mirror, _, d_inertia = self._arrays()
        m, _, c = self._unit_values(x)
        blk = np.zeros((unit.size, PARAMS_PER_LINK, self.width))
        blk[:, 0, 0] = 1.0
        blk[:, 1:4, 0] = c
        d_par = _parallel_vech_grad(c)
        blk[:, 4:, 0] = _parallel_vech(c, d_par)
        blk[:, 1:4, 1:4] = m[:, None, None] * mirror
        blk[:, 4:, 1:4] = m[:, None, None] * (d_par @ mirror)  # d (m vech S(c)) / d cu, c = A cu
        if self.identify_inertia:
            blk[:, 4:, 4:10] = d_inertia
        cols = self.width * unit[:, None] + np.arange(self.width)
        jac = np.zeros((self.pi_cad.size, self.size))
        jac[rows[:, :, None], cols[:, None, :]] = blk  # one member per link: no overlap
        return jac

    def curvature(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        """``sum_k g_k d2 pi_k / dx2`` (analytic, all members at once; for Newton's Hessian).

        Per link, with ``G`` the symmetric matrix of ``g``'s inertia entries (``g . vech(X) =
        tr(G X)``) and ``Q = tr(G) I - G``: ``g . pi = g_m m + g_h . m A c_u + m c_u^T A^T Q A
        c_u + ...``, so the (m, c_u) block is ``A^T g_h + 2 A^T Q A c_u`` and the (c_u, c_u)
        block ``2 m A^T Q A``; the map is linear in the inertia entries.
        """
        x = self._check(x)
        g = np.asarray(g, float)
        unit, rows, mirror, _, _ = self._arrays()
        m, cu, _ = self._unit_values(x)
        gr = g[rows]  # (M, 10)
        q = (gr[:, 4:] @ _Q_OF_VECH).reshape(-1, 3, 3)
        mirror_t = mirror.transpose(0, 2, 1)
        aqa = mirror_t @ q @ mirror
        blk = np.zeros((unit.size, 4, 4))
        blk[:, 0, 1:] = blk[:, 1:, 0] = (mirror_t @ gr[:, 1:4, None])[:, :, 0] + 2 * (
            aqa @ cu[:, :, None])[:, :, 0]
        blk[:, 1:, 1:] = 2 * m[:, None, None] * aqa
        return np.bincount(self._curvature_index(), blk.ravel(),
                           minlength=self.size * self.size).reshape(self.size, self.size)

    def _curvature_index(self) -> np.ndarray:
        """Flat indices in the (size, size) Hessian of each member's (m, c_u) block (M*16)."""
        if getattr(self, '_curv_index', None) is None:
            first = self.width * self._arrays()[0]  # (M,) each member's unit's mass column
            idx = first[:, None] + np.arange(4)
            self._curv_index = (idx[:, :, None] * self.size + idx[:, None, :]).ravel()
        return self._curv_index

    # ---- CAD, inverse map, rows and scales ----

    def cad(self) -> np.ndarray:
        """CAD values of ``x``."""
        return self._x_cad.copy()

    def from_standard(self, pi: np.ndarray) -> np.ndarray:
        """Grouped parameters of a standard vector: per unit the mean mass, mean (unmirrored)
        COM and mean (unmirrored) inertia about the COM of its links."""
        pi = np.asarray(pi, float)
        x = np.zeros(self.size)
        count = np.zeros(self.n_groups)
        for mem in self.members:
            m, h, i_o = unpack(pi[PARAMS_PER_LINK * mem.index:PARAMS_PER_LINK * (mem.index + 1)])
            c = h / m if m > 0 else np.zeros(3)
            seg = slice(self.width * mem.unit, self.width * (mem.unit + 1))
            part = [m, *(mem.mirror.T @ c)]
            if self.identify_inertia:
                part += list((mem.mirror.T @ (i_o - m * _parallel(c)) @ mem.mirror)[_VECH])
            x[seg] += part
            count[mem.unit] += 1
        return x / np.repeat(count, self.width)

    def mass_row(self) -> np.ndarray:
        """Row ``c`` with ``c . x`` the grouped links' total mass [kg] (add ``fixed_mass``)."""
        c = np.zeros(self.size)
        for mem in self.members:
            c[self.width * mem.unit] += 1.0
        return c

    def mass_name(self, link: str) -> str:
        """Name of the parameter holding ``link``'s mass (``m_foot``, ``m_left_foot``)."""
        for mem in self.members:
            if self.link_names[mem.index] == link:
                return self.names[self.width * mem.unit]
        raise BadInputError(f'link {link!r} is in no link group')

    def scales(self) -> np.ndarray:
        """Typical magnitudes: ``mass_scale`` x CAD mass, ``com_scale`` per COM coordinate,
        30 % of the unit's largest CAD moment (+1e-4 kg.m^2) per inertia entry."""
        s = np.zeros(self.size)
        cad = self.cad()
        for u in range(self.n_groups):
            b = self.width * u
            s[b] = self.mass_scale * cad[b]
            s[b + 1:b + 4] = self.com_scale
            if self.identify_inertia:
                s[b + 4:b + 10] = 0.3 * np.abs(cad[[b + 4, b + 6, b + 9]]).max() + 1e-4
        return s

    def bounds(self, mass_lo: float = 0.2, mass_hi: float = 3.0, com_box_m: float = 0.1
               ) -> Tuple[np.ndarray, np.ndarray]:
        """Box: masses in [mass_lo, mass_hi] x CAD (> 0: consistency), COMs within CAD +-
        ``com_box_m`` [m]; inertia diagonal in [0.1, 10] x CAD, products within +- the
        unit's largest CAD moment."""
        if mass_lo <= 0:
            raise BadInputError(f'mass_lo must be > 0 (physical consistency), not {mass_lo}')
        cad = self.cad()
        lb, ub = cad - com_box_m, cad + com_box_m
        for u in range(self.n_groups):
            b = self.width * u
            lb[b], ub[b] = mass_lo * cad[b], mass_hi * cad[b]
            if self.identify_inertia:
                top = np.abs(cad[[b + 4, b + 6, b + 9]]).max()
                for k, diag in zip(range(4, 10), (True, False, True, False, False, True)):
                    lb[b + k] = 0.1 * cad[b + k] if diag else -top
                    ub[b + k] = 10.0 * cad[b + k] if diag else top
        return lb, ub


def jacobian_curvature(jacobian, x: np.ndarray, g: np.ndarray, step: float = 1e-4
                       ) -> np.ndarray:
    """``sum_k g_k d2 pi_k / dx2`` by central differences of an analytic ``jacobian(x)``.

    Exact up to rounding when every Jacobian entry is at most quadratic in each ``x`` entry
    (the reduced and grouped sets).
    """
    n = x.size
    out = np.zeros((n, n))
    for b in range(n):
        e = np.zeros(n)
        e[b] = step
        out[:, b] = (jacobian(x + e) - jacobian(x - e)).T @ g / (2 * step)
    return 0.5 * (out + out.T)
