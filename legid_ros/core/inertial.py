"""Standard inertial parameters: vectors, names, per-link views, get/set, consistency.

A link's standard parameters are ``[m, m cx, m cy, m cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``
about the link (joint) frame origin, pinocchio's ``Inertia.toDynamicParameters()`` order.
Units: [kg], [kg.m], [kg.m^2]. Physical consistency (positive mass, inertia about the COM
positive definite, as the Tencent patent application 2022 asks) is checked as a positive
definite pseudo-inertia (:func:`pseudo_inertia_layout`, whose affine twin is the LMI of
:mod:`legid_ros.core.identification.solvers.sdp`) plus the triangle inequalities.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError
from legid_ros.core.robot import body_names

PARAMS_PER_LINK = 10
PARAM_SUFFIXES = ('m', 'mcx', 'mcy', 'mcz', 'ixx', 'ixy', 'iyy', 'ixz', 'iyz', 'izz')


def parameter_names(model: pin.Model) -> List[str]:
    """Names ``<link>.<suffix>`` of the stacked standard parameters (joints 1..n-1)."""
    return [f'{b}.{s}' for b in body_names(model) for s in PARAM_SUFFIXES]


def get_parameters(model: pin.Model) -> np.ndarray:
    """Stacked standard parameters of every moving body, shape (10 (njoints-1),)."""
    return np.concatenate([model.inertias[j].toDynamicParameters()
                           for j in range(1, model.njoints)])


def set_parameters(model: pin.Model, pi: np.ndarray) -> None:
    """Write stacked standard parameters into ``model.inertias`` (in place).

    Raises:
        BadInputError: wrong length or non-finite values.
    """
    pi = np.asarray(pi, float)
    expected = PARAMS_PER_LINK * (model.njoints - 1)
    if pi.shape != (expected,):
        raise BadInputError(f'parameter vector has shape {pi.shape}, expected ({expected},)')
    if not np.all(np.isfinite(pi)):
        raise BadInputError('parameter vector holds NaN or inf')
    for j in range(1, model.njoints):
        seg = pi[PARAMS_PER_LINK * (j - 1):PARAMS_PER_LINK * j]
        model.inertias[j] = pin.Inertia.FromDynamicParameters(seg)


def link_view(pi: np.ndarray, index: int) -> np.ndarray:
    """View of the 10 parameters of body ``index`` (0-based over moving bodies)."""
    return pi[PARAMS_PER_LINK * index:PARAMS_PER_LINK * (index + 1)]


def link_index(model: pin.Model, link: str) -> int:
    """0-based body index of a link in the stacked vector."""
    names = body_names(model)
    if link not in names:
        raise BadInputError(f'link {link!r} carries no joint inertia; links: {names}')
    return names.index(link)


def unpack(p: np.ndarray):
    """Split one link's 10 parameters into mass [kg], first moment h [kg.m], I_O [kg.m^2]."""
    m = p[0]
    h = np.array(p[1:4])
    ixx, ixy, iyy, ixz, iyz, izz = p[4:10]
    inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    return m, h, inertia


def pack(mass: float, com: np.ndarray, inertia_com: np.ndarray) -> np.ndarray:
    """10 parameters from mass [kg], COM [m] and inertia about the COM [kg.m^2]."""
    c = np.asarray(com, float)
    i_o = np.asarray(inertia_com, float) + mass * (c @ c * np.eye(3) - np.outer(c, c))
    return np.array([mass, *(mass * c), i_o[0, 0], i_o[0, 1], i_o[1, 1], i_o[0, 2], i_o[1, 2],
                     i_o[2, 2]])


def pseudo_inertia_layout(p) -> List[list]:
    """The 4x4 pseudo-inertia ``[[tr(I)/2 E - I, h], [h^T, m]]`` as nested rows.

    The one definition of the matrix layout: ``p`` is anything indexable by ``0..9`` in the
    standard order, a numpy vector (:func:`pseudo_inertia`) or an affine cvxpy expression
    (``cp.bmat`` of the rows is the LMI of
    :mod:`legid_ros.core.identification.solvers.sdp`).
    """
    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = (p[k] for k in range(PARAMS_PER_LINK))
    half = 0.5 * (ixx + iyy + izz)
    return [[half - ixx, -ixy, -ixz, hx],
            [-ixy, half - iyy, -iyz, hy],
            [-ixz, -iyz, half - izz, hz],
            [hx, hy, hz, m]]


def pseudo_inertia(p: np.ndarray) -> np.ndarray:
    """4x4 pseudo-inertia of one link (:func:`pseudo_inertia_layout`), PD iff consistent."""
    return np.array(pseudo_inertia_layout(np.asarray(p, float)), float)


# J(p) = sum_k p_k E[k]: the pseudo-inertia is linear in the 10 parameters
PSEUDO_BASIS = np.array([pseudo_inertia(row) for row in np.eye(PARAMS_PER_LINK)])
_PSEUDO_BASIS = PSEUDO_BASIS
# positions of I_O's entries in the 10 parameters (the layout of :func:`unpack`)
_INERTIA_INDEX = np.array([[4, 5, 7], [5, 6, 8], [7, 8, 9]])


@dataclass
class LinkConsistency:
    """Consistency of one link's parameters.

    Attributes:
        link: Link name.
        mass: Mass [kg].
        min_pseudo_eig: Smallest eigenvalue of the pseudo-inertia [kg.m^2].
        principal_moments: Principal moments of inertia about the COM [kg.m^2].
        triangle_margin: min over (I1 + I2 - I3) of the principal moments [kg.m^2].
        ok: Whether the link is physically consistent.
        problems: Readable reasons when not.
    """

    link: str
    mass: float
    min_pseudo_eig: float
    principal_moments: np.ndarray
    triangle_margin: float
    ok: bool
    problems: List[str] = field(default_factory=list)


@dataclass
class ConsistencyReport:
    """Physical consistency of a whole parameter set.

    Attributes:
        links: Per-link results.
    """

    links: List[LinkConsistency]

    @property
    def ok(self) -> bool:
        """Whether every link is physically consistent."""
        return all(link.ok for link in self.links)

    @property
    def failing(self) -> List[str]:
        """Links that are not consistent."""
        return [link.link for link in self.links if not link.ok]

    def __str__(self) -> str:
        lines = [f'physically consistent: {"yes" if self.ok else "NO"}']
        for link in self.links:
            mark = 'ok ' if link.ok else 'BAD'
            lines.append(f'  {mark} {link.link:<18} m={link.mass:9.4f} kg  '
                         f'min eig(J)={link.min_pseudo_eig:+.3e}  '
                         f'triangle margin={link.triangle_margin:+.3e}'
                         + (f'  ({"; ".join(link.problems)})' if link.problems else ''))
        return '\n'.join(lines)


def check_links(links: np.ndarray, names: List[str], tol: float = 1e-12
                ) -> List[LinkConsistency]:
    """Check links given as rows ``(L, 10)``: mass > 0, pseudo-inertia PD, triangle
    inequalities about the COM (eigenvalues of all links in one batch)."""
    links = np.asarray(links, float).reshape(-1, PARAMS_PER_LINK)
    jmats = np.einsum('lk,kab->lab', links, _PSEUDO_BASIS)
    min_eigs = np.linalg.eigvalsh(jmats)[:, 0] if len(links) else np.zeros(0)
    mass = links[:, 0]
    safe = np.where(mass > tol, mass, 1.0)
    com = links[:, 1:4] / safe[:, None]
    inertia = links[:, _INERTIA_INDEX]
    shift = (np.einsum('li,li->l', com, com)[:, None, None] * np.eye(3)
             - np.einsum('li,lj->lij', com, com))
    i_c = inertia - safe[:, None, None] * shift
    moments_all = np.linalg.eigvalsh(0.5 * (i_c + np.swapaxes(i_c, 1, 2)))
    positive = mass > tol
    margins = moments_all[:, 0] + moments_all[:, 1] - moments_all[:, 2]
    ok = positive & (moments_all[:, 0] >= -tol) & (margins >= -tol) & (min_eigs > -tol)
    out = []
    for k, (name, m, min_eig) in enumerate(zip(names, mass.tolist(), min_eigs.tolist())):
        if ok[k]:  # the usual case: no reasons to write
            out.append(LinkConsistency(link=name, mass=m, min_pseudo_eig=min_eig,
                                       principal_moments=moments_all[k],
                                       triangle_margin=float(margins[k]), ok=True))
            continue
        problems = []
        if m <= tol:
            problems.append(f'mass {m:.4g} kg <= 0')
            moments = np.full(3, np.nan)
            margin = float('nan')
        else:
            moments = moments_all[k]
            margin = float(margins[k])
            if moments[0] < -tol:
                problems.append(f'negative principal moment {moments[0]:.3g} kg.m^2')
            if margin < -tol:
                problems.append(f'triangle inequality violated by {-margin:.3g} kg.m^2')
        if min_eig <= -tol and not problems:
            problems.append(f'pseudo-inertia not PD (min eig {min_eig:.3g})')
        out.append(LinkConsistency(link=name, mass=m, min_pseudo_eig=min_eig,
                                   principal_moments=moments, triangle_margin=margin,
                                   ok=not problems, problems=problems))
    return out


def check_link(p: np.ndarray, link: str = '', tol: float = 1e-12) -> LinkConsistency:
    """Check one link: mass > 0, pseudo-inertia PD, triangle inequalities about the COM."""
    return check_links(np.asarray(p, float)[None, :], [link], tol)[0]


def check_consistency(pi: np.ndarray, names: List[str], tol: float = 1e-12
                      ) -> ConsistencyReport:
    """Check a stacked parameter vector link by link.

    Args:
        pi: Stacked standard parameters, 10 per link.
        names: Link names, one per 10 parameters.
        tol: Tolerance on eigenvalues [kg.m^2] and mass [kg].
    """
    pi = np.asarray(pi, float)
    if pi.size != PARAMS_PER_LINK * len(names):
        raise BadInputError(f'{pi.size} parameters for {len(names)} links')
    return ConsistencyReport(check_links(pi.reshape(-1, PARAMS_PER_LINK), list(names), tol))
