"""Relative standard deviations and seed 003's F-test parameter reduction.

``eps_i = 100 sigma_i / |p_i|`` from the WLS covariance ``s^2 (A^T A)^-1``; parameters with
``eps_i > eps_0`` are removed for ``eps_0 = 60, 55, ...`` while the F statistic
``[(RSS_r - RSS)/(b - b_r)] / [RSS/(M - b)]`` stays below its 95 % quantile. A
Kolmogorov-Smirnov test of the standardised residuals against the normal law is done first
and reported (the F-test assumes Gaussian residuals).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List

import numpy as np
from scipy import stats

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.solvers.least_squares import solve_ls


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
    """Seed 003's reduction on the (whitened, outlier-free) system ``a x = y``."""
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
