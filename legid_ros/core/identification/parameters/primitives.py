"""Physically consistent identification by homogeneous primitive bodies (Tencent patent
application 2022).

Each link listed under ``primitives:`` in the description YAML is split into homogeneous
bodies (cuboid ``size [a, b, c]``, cylinder and cone ``radius, length`` along z, sphere
``radius``; ``xyz`` = the body's centroid in the link frame, optional ``rpy``). A body's 10
parameters are its unknown mass times a known unit-mass vector, so ``pi = pi_fixed + P rho``
(links without primitives keep their CAD parameters in ``pi_fixed``) and::

    min_rho (A P rho - b')^T W_x (A P rho - b') / n + (rho - rho_cad)^T W_rho (rho - rho_cad)
    s.t. rho >= eps, sum(rho) = M - m_fixed

``W_x``: per-row-group weights (inverse squared RMS residual, as in the other linear methods);
``W_rho = reg diag(1 / s_rho^2)`` keeps the Hessian positive definite under poor excitation.
(The patent's ``rho^T W_rho rho`` pulls toward zero mass; pulling toward the CAD split
``rho_cad`` avoids that bias.) Any non-negative mix of bodies is physically consistent.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Dict, List, Optional

import numpy as np
import pinocchio as pin
from scipy.optimize import nnls

from legid_ros.core.errors import RobotDescriptionError
from legid_ros.core.identification.identifiability import DEFAULT_MAX_COND, excitation
from legid_ros.core.identification.rows.linear import Rows, fold_rows, group_weights
from legid_ros.core.identification.parameters.sets import StandardSet
from legid_ros.core.identification.solvers.qp import ParameterQP
from legid_ros.core.identification.result import IdentResult
from legid_ros.core.identification.solvers.standard import DEFAULT_REG
from legid_ros.core.inertial import PARAMS_PER_LINK, check_consistency, link_index, pack
from legid_ros.core.robot import Robot

EPS_MASS = 1e-3  # [kg] smallest body mass


@dataclass
class Primitive:
    """One homogeneous body.

    Attributes:
        link: Link it belongs to.
        kind: 'cuboid', 'cylinder', 'sphere' or 'cone'.
        unit: Its 10 standard parameters for a mass of 1 kg, about the link frame.
        box_min, box_max: Axis-aligned bounds of the body in the link frame [m].
    """

    link: str
    kind: str
    unit: np.ndarray
    box_min: np.ndarray
    box_max: np.ndarray


def unit_inertia(kind: str, spec: dict) -> (np.ndarray, np.ndarray):
    """Inertia about the centroid for 1 kg [m^2] and half extents [m] of a primitive."""
    if kind == 'cuboid':
        a, b, c = (float(v) for v in spec['size'])
        return np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) / 12.0, \
            np.array([a, b, c]) / 2
    if kind in ('cylinder', 'cone'):
        r, h = float(spec['radius']), float(spec['length'])
        if kind == 'cylinder':
            ixx = (3 * r * r + h * h) / 12.0
            return np.diag([ixx, ixx, r * r / 2.0]), np.array([r, r, h / 2])
        ixx = 3.0 / 20.0 * r * r + 3.0 / 80.0 * h * h
        return np.diag([ixx, ixx, 0.3 * r * r]), np.array([r, r, 0.75 * h])
    if kind == 'sphere':
        r = float(spec['radius'])
        return np.eye(3) * 0.4 * r * r, np.array([r, r, r])
    raise RobotDescriptionError(f'unknown primitive type {kind!r} (cuboid, cylinder, sphere, '
                                'cone)')


def parse_primitives(robot: Robot) -> Dict[str, List[Primitive]]:
    """Primitive bodies per link from the description's ``primitives:`` section."""
    section = robot.description.get('primitives') or {}
    if not section:
        raise RobotDescriptionError(f'robot {robot.name!r} has no primitives in its description')
    out = {}
    for link, bodies in section.items():
        link_index(robot.model, link)
        items = []
        for spec in bodies:
            kind = spec.get('type')
            inertia, half = unit_inertia(kind, spec)
            xyz = np.asarray(spec.get('xyz', [0, 0, 0]), float)
            rot = pin.rpy.rpyToMatrix(*np.asarray(spec.get('rpy', [0, 0, 0]), float))
            ext = np.abs(rot) @ half
            items.append(Primitive(link, kind, pack(1.0, xyz, rot @ inertia @ rot.T),
                                   xyz - ext, xyz + ext))
        out[link] = items
    return out


def primitive_basis(robot: Robot, pi_cad: np.ndarray):
    """``(P, pi_fixed, rho_cad, bodies)`` with ``pi = pi_fixed + P rho``.

    ``rho_cad`` is the non-negative split of each link's CAD parameters over its bodies that
    best matches them (mass row weighted 100x, so CAD masses are kept).
    """
    prims = parse_primitives(robot)
    npi = pi_cad.size
    bodies = [b for link in prims for b in prims[link]]
    basis = np.zeros((npi, len(bodies)))
    fixed = np.array(pi_cad, float)
    rho_cad = np.zeros(len(bodies))
    scales = StandardSet(robot, pi_cad).scales()
    col = 0
    for link, items in prims.items():
        i = link_index(robot.model, link)
        sl = slice(PARAMS_PER_LINK * i, PARAMS_PER_LINK * (i + 1))
        fixed[sl] = 0.0
        cols = np.column_stack([b.unit for b in items])
        basis[sl, col:col + len(items)] = cols
        wrow = 1.0 / scales[sl]
        wrow[0] *= 100.0
        rho_cad[col:col + len(items)], _ = nnls(cols * wrow[:, None], pi_cad[sl] * wrow)
        col += len(items)
    return basis, fixed, rho_cad, bodies


def identify_primitives(rows: Rows, robot: Robot, total_mass: float,
                        pi_cad: Optional[np.ndarray] = None, reg: float = DEFAULT_REG,
                        eps_mass: float = EPS_MASS, max_cond: float = DEFAULT_MAX_COND,
                        check: bool = True) -> IdentResult:
    """Primitive-body identification (see the module docstring)."""
    t0 = time.perf_counter()
    param = StandardSet(robot, pi_cad)
    cad = param.cad()
    npi = param.size
    basis, fixed, rho_cad, bodies = primitive_basis(robot, cad)
    fixed_mass = float(param.mass_row() @ fixed)
    s_rho = 0.2 * rho_cad + 0.05
    qp = ParameterQP(rho_cad, s_rho, np.full(len(bodies), eps_mass),
                     np.full(len(bodies), np.inf), np.ones(len(bodies)),
                     total_mass - fixed_mass, reg)
    x = np.concatenate([fixed + basis @ rho_cad, np.zeros(rows.nf)])
    if rows.nf:
        x[npi:] = fold_rows(rows).eliminate(npi)[2](x[:npi])
    rho = rho_cad
    for k in range(2):
        w = group_weights(rows, x)
        hs, gs, recover = fold_rows(rows, w).eliminate(npi)
        if k == 0 and check:
            excitation(robot, hs, rows.n_samples, cad, max_cond=max_cond)
        sol = qp.solve(basis.T @ hs @ basis, basis.T @ (gs - hs @ fixed), rows.n_samples,
                       warm=rho)
        rho = sol.x
        pi = fixed + basis @ rho
        fr = recover(pi)
        x = np.concatenate([pi, fr if fr is not None else []])
    r = rows.A @ x - rows.b
    rep = excitation(robot, hs, rows.n_samples, pi, sigma_res=float(np.sqrt(np.mean(w * r ** 2))),
                     raise_error=False)
    names = [f'{b.link}.{b.kind}{j}' for j, b in enumerate(bodies)]
    return IdentResult(
        method='primitives', pi=pi, x=rho, names=names, param_names=param.names,
        total_mass=total_mass, condition_number=rep.condition_number,
        residual_rms=float(np.sqrt(np.mean(r ** 2))), solve_time_s=time.perf_counter() - t0,
        iterations=sol.iterations, consistency=check_consistency(pi, param.link_names),
        identifiable=rep.lines, friction=x[npi:] if rows.nf else None,
        n_samples=rows.n_samples,
        info={'rows': rows.kind, 'reg': reg, 'eps_mass_kg': eps_mass, 'rho_cad': rho_cad.tolist()})
