"""Is the data exciting enough? Condition number and identifiable combinations.

The standard set is never fully identifiable (base parameters), and regularisation toward CAD
keeps unexcited directions at CAD. What must be excited is the *core*: seed 000's reduced set
(axial COM and mass of every link group) when the robot has link groups, else every link's
mass and first moment. The information of the data in the core, ``M = J^T (A^T A / n) J``
(``J = d pi / d x_core`` times the core scales, restricted to the total-mass plane), gives:

- the condition number (raise :class:`NotIdentifiableError` above ``max_cond``, naming the
  weakest directions), and
- per eigen-direction, the expected standard deviation of the estimate
  ``sigma_res / sqrt(n lambda)`` in units of the core scale; directions with a spread above
  ``poor_spread`` are reported as poorly identified (seed 000 physics note 2: report which
  combinations are identifiable instead of a confident number for each).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Sequence

import numpy as np
import scipy.linalg as sla

from legid_ros.core.errors import NotIdentifiableError
from legid_ros.core.identification.parameters.sets import ReducedSet, StandardSet
from legid_ros.core.inertial import PARAMS_PER_LINK
from legid_ros.core.robot import Robot

DEFAULT_MAX_COND = 1e10


@dataclass
class ExcitationReport:
    """Excitation of the identifiable core.

    Attributes:
        condition_number: Largest / smallest eigenvalue of the core information matrix.
        directions: Readable combination per eigenvalue, weakest first.
        spreads: Expected standard deviation of each combination, in core-scale units.
        lines: Readable report.
    """

    condition_number: float
    directions: List[str] = field(default_factory=list)
    spreads: List[float] = field(default_factory=list)
    lines: List[str] = field(default_factory=list)


_CACHE: dict = {}


def _core(robot: Robot, pi_ref: np.ndarray):
    key = (id(robot.model), np.asarray(pi_ref, float).tobytes())
    if key not in _CACHE:
        if len(_CACHE) > 64:
            _CACHE.clear()
        jac, c, names = _core_uncached(robot, pi_ref)
        z = sla.null_space((c / np.linalg.norm(c))[None, :])
        _CACHE[key] = (jac, c, names, z)
    return _CACHE[key]


def _core_uncached(robot: Robot, pi_ref: np.ndarray):
    if robot.link_groups:
        core = ReducedSet(robot, pi_cad=pi_ref)
        x0 = core.from_standard(pi_ref)
        jac = core.jacobian(x0) * core.scales()[None, :]
        return jac, core.mass_row(), core.names
    std = StandardSet(robot, pi_ref)
    cols = [i for i in range(std.size) if i % PARAMS_PER_LINK < 4]
    jac = np.zeros((std.size, len(cols)))
    sc = std.scales()
    for j, i in enumerate(cols):
        jac[i, j] = sc[i]
    return jac, std.mass_row()[cols], [std.names[i] for i in cols]


def describe(vec: np.ndarray, names: List[str], top: int = 3) -> str:
    """A direction as its largest components: ``'0.71 m_shank - 0.70 m_foot'``."""
    order = np.argsort(-np.abs(vec))[:top]
    sign = 1.0 if vec[order[0]] >= 0 else -1.0
    parts = []
    for i in order:
        if abs(vec[i]) < 0.1 * abs(vec[order[0]]):
            continue
        c = sign * vec[i]
        parts.append(f'{"-" if c < 0 else "+"} {abs(c):.2f} {names[i]}')
    text = ' '.join(parts)
    return text[2:] if text.startswith('+ ') else text


def excitation(robot: Robot, info: np.ndarray, n: int, pi_ref: np.ndarray,
               sigma_res: float = None, max_cond: float = DEFAULT_MAX_COND,
               poor_spread: float = 0.05, raise_error: bool = True,
               held: Sequence[str] = ()) -> ExcitationReport:
    """Check the data's information about the core parameters.

    Args:
        robot: Robot (its link groups define the core).
        info: ``sum A^T A`` over the rows, in standard parameters (P, P) (extra trailing
            columns, e.g. friction, must already be eliminated).
        n: Number of samples behind ``info``.
        pi_ref: Standard parameters to linearise at (CAD or the estimate).
        sigma_res: RMS row residual, for the spreads (default: spreads not computed).
        max_cond: Condition number above which the data is not identifiable.
        poor_spread: Spread (in core-scale units) above which a combination is "poor".
        raise_error: Raise :class:`NotIdentifiableError` when above ``max_cond``.
        held: Core parameter names measured otherwise and held fixed (e.g. ``m_foot``):
            treated as known exactly, so only what the data must still decide is reported.
    """
    jac, c, names, z = _core(robot, pi_ref)
    m = jac.T @ info @ jac / max(n, 1)
    fixed = [names.index(h) for h in held if h in names]
    if fixed:  # only the plane the data must still decide: mass equality and held values
        rows = np.vstack([c / np.linalg.norm(c), np.eye(len(names))[fixed]])
        z = sla.null_space(rows)
    mz = z.T @ m @ z
    lam, vec = np.linalg.eigh(0.5 * (mz + mz.T))
    top = max(lam[-1], 1e-300)
    cond = float(top / lam[0]) if lam[0] > 1e-14 * top else float('inf')
    dirs = [describe(z @ vec[:, i], names) for i in range(lam.size)] if (
        sigma_res is not None or cond > max_cond) else []
    spreads = []
    lines = [f'core information condition number {cond:.3g}']
    if sigma_res is not None and n > 0:
        for i in range(lam.size):
            s = float(sigma_res / np.sqrt(n * max(lam[i], 1e-300)))
            spreads.append(s)
            tag = 'POOR' if s > poor_spread else 'ok  '
            lines.append(f'  {tag} spread {s:9.3g} x scale: {dirs[i]}')
    if raise_error and cond > max_cond:
        weak = [d for d, lv in zip(dirs, lam) if lv < top / max_cond]
        raise NotIdentifiableError('the data does not excite the inertial parameters enough',
                                   cond, weak[:4] or dirs[:1])
    return ExcitationReport(cond, dirs, spreads, lines)
