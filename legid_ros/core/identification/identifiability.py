"""Identifiability: what the data can determine, and how well.

Two uses of one concept, the information ``A^T A`` of the rows about the parameters:

**Conditioning of the core (floating-base robots, before and after every batch or online
solve).** The standard set is never fully identifiable (base parameters), and regularisation
toward CAD keeps unexcited directions at CAD. What must be excited is the *core*: the ZMP
reduced set (axial COM and mass of every link group; Wu & Gao 2021) when the robot has link
groups (or the grouped set a method fits: 3-D COM and mass per group or group side), else every
link's mass and first moment. The information of the data in the core,
``M = J^T (A^T A / n) J`` (``J = d pi / d x_core`` times the core scales, restricted to the
total-mass plane), gives:

- the condition number (raise :class:`NotIdentifiableError` above ``max_cond``, naming the
  weakest directions), and
- per eigen-direction, the expected standard deviation of the estimate
  ``sigma_res / sqrt(n lambda)`` in units of the core scale; directions with a spread above
  ``poor_spread`` are reported as poorly identified (report which combinations are
  identifiable instead of a confident number for each, as Wu & Gao 2021 note).

**Significance of each parameter (fixed-base geared leg, after the robust loops).** Relative
standard deviations ``eps_i = 100 sigma_i / |p_i|`` from the WLS covariance
``s^2 (A^T A)^-1``, and the F-test parameter reduction of the robust identification with
exponential friction (Zhu & Zhang): parameters with ``eps_i > eps_0`` are removed for
``eps_0 = 60, 55, ...`` while the F statistic ``[(RSS_r - RSS)/(b - b_r)] / [RSS/(M - b)]``
stays below its 95 % quantile. A Kolmogorov-Smirnov test of the standardised residuals
against the normal law is done first and reported (the F-test assumes Gaussian residuals).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Sequence

import numpy as np
import scipy.linalg as sla
from scipy import stats

from legid_ros.core.errors import BadInputError, NotIdentifiableError
from legid_ros.core.identification.parameters.sets import GroupedSet, ReducedSet, StandardSet
from legid_ros.core.identification.solvers.least_squares import solve_ls
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


def _core(robot: Robot, pi_ref: np.ndarray, core: str = 'reduced'):
    key = (id(robot.model), np.asarray(pi_ref, float).tobytes(), core)
    if key not in _CACHE:
        if len(_CACHE) > 64:
            _CACHE.clear()
        jac, c, names = _core_uncached(robot, pi_ref, core)
        z = sla.null_space((c / np.linalg.norm(c))[None, :])
        _CACHE[key] = (jac, c, names, z)
    return _CACHE[key]


def _core_uncached(robot: Robot, pi_ref: np.ndarray, core: str = 'reduced'):
    if robot.link_groups:
        basis = GroupedSet(robot, pi_cad=pi_ref, per_side=core == 'grouped_sides') \
            if core in ('grouped', 'grouped_sides') else ReducedSet(robot, pi_cad=pi_ref)
        x0 = basis.from_standard(pi_ref)
        jac = basis.jacobian(x0) * basis.scales()[None, :]
        return jac, basis.mass_row(), basis.names
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
               held: Sequence[str] = (), core: str = 'reduced') -> ExcitationReport:
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
        core: 'reduced' (the ZMP reduced set), or 'grouped' / 'grouped_sides' (mass and 3-D COM
            per link group or group side: the core of a method on those sets).
    """
    jac, c, names, z = _core(robot, pi_ref, core)
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


# ---- significance of each parameter: relative standard deviations, F-test ----

@dataclass
class FTestStep:
    """One threshold of the reduction.

    Attributes:
        eps0: Threshold [%].
        removed: Parameters removed at this threshold.
        f_stat: F statistic.
        f_crit: 95 % quantile of F.
        accepted: ``f_stat <= f_crit``.
    """

    eps0: float
    removed: List[str]
    f_stat: float
    f_crit: float
    accepted: bool


@dataclass
class FTestResult:
    """Outcome of the reduction.

    Attributes:
        rel_std_pct: ``eps_i`` per parameter [%].
        names: Parameter names.
        ks_stat, ks_pvalue: KS test of the standardised residuals.
        steps: Every threshold tried (stops at the first rejected one).
        removed: Parameters removed at the last accepted threshold.
        f_stat, f_crit: F statistic and quantile at that threshold.
        eps0: Last accepted threshold [%] (None if none).
        kept: Remaining parameter names.
    """

    rel_std_pct: np.ndarray
    names: List[str]
    ks_stat: float
    ks_pvalue: float
    steps: List[FTestStep] = field(default_factory=list)
    removed: List[str] = field(default_factory=list)
    f_stat: float = 0.0
    f_crit: float = 0.0
    eps0: float = None
    kept: List[str] = field(default_factory=list)


def relative_std(a: np.ndarray, y: np.ndarray):
    """``(x, eps [%], rss)`` of the LS fit ``a x = y``."""
    m, b = a.shape
    if m <= b:
        raise BadInputError(f'{m} rows are too few for {b} parameters')
    x = solve_ls(a, y)
    rss = float(np.sum((a @ x - y) ** 2))
    s2 = rss / (m - b)
    cov = s2 * np.linalg.pinv(a.T @ a)
    sig = np.sqrt(np.maximum(np.diag(cov), 0.0))
    with np.errstate(divide='ignore'):
        eps = 100.0 * sig / np.abs(x)
    return x, eps, rss


def f_test_reduction(a: np.ndarray, y: np.ndarray, names: List[str], start: float = 60.0,
                     step: float = 5.0, stop: float = 5.0, level: float = 0.95
                     ) -> FTestResult:
    """The F-test reduction of Zhu & Zhang on the (whitened, outlier-free) system ``a x = y``."""
    if a.shape[1] != len(names):
        raise BadInputError(f'{a.shape[1]} columns but {len(names)} names')
    x, eps, rss = relative_std(a, y)
    m, b = a.shape
    res = y - a @ x
    ks = stats.kstest(res / res.std(ddof=b), 'norm')
    out = FTestResult(eps, list(names), float(ks.statistic), float(ks.pvalue),
                      kept=list(names))
    eps0 = start
    while eps0 >= stop - 1e-9:
        drop = np.where(eps > eps0)[0]
        if drop.size == 0:
            eps0 -= step
            continue
        keep = np.setdiff1d(np.arange(b), drop)
        xr = solve_ls(a[:, keep], y)
        rss_r = float(np.sum((a[:, keep] @ xr - y) ** 2))
        br = keep.size
        f_stat = ((rss_r - rss) / (b - br)) / (rss / (m - b))
        f_crit = float(stats.f.ppf(level, b - br, m - b))
        ok = f_stat <= f_crit
        out.steps.append(FTestStep(eps0, [names[i] for i in drop], float(f_stat), f_crit, ok))
        if not ok:
            break
        out.removed = [names[i] for i in drop]
        out.f_stat, out.f_crit, out.eps0 = float(f_stat), f_crit, eps0
        out.kept = [names[i] for i in keep]
        eps0 -= step
    return out
