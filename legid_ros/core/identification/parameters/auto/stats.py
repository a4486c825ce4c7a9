"""The statistics of the auto set's selection: effective sample size and the F-test.

- :func:`effective_sample_size`: ``n / tau`` with ``tau`` the integrated autocorrelation time,
  cut by Geyer's initial positive sequence (filtered rows at 100-200 Hz are far from
  independent);
- :func:`f_test`: Zhu & Zhang's F-test for nested least-squares models on that ``n_eff``;
- :func:`nested_test`: one comparison of the selection (F-test or held-out decrease), as a
  :class:`Test` record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

import numpy as np
from scipy import stats

from legid_ros.core.errors import BadInputError


def effective_sample_size(series: np.ndarray) -> Tuple[float, float]:
    """``(n_eff, tau)`` of a stationary series: ``tau = 1 + 2 sum_k rho_k`` with the sum cut
    by Geyer's initial positive sequence (pairs ``rho_2k + rho_2k+1`` summed while
    positive), ``n_eff = n / tau`` (at most ``n``)."""
    x = np.asarray(series, float)
    x = x[np.isfinite(x)]
    n = x.size
    if n < 4:
        return float(n), 1.0
    x = x - x.mean()
    f = np.fft.rfft(x, 2 * n)
    acov = np.fft.irfft(f * np.conj(f))[:n] / n
    if acov[0] <= 0:
        return float(n), 1.0
    rho = acov / acov[0]
    tau = -1.0  # 1 + 2 sum_{k>=1} rho_k = -1 + 2 sum_{k>=0} (rho_2k + rho_2k+1)
    for k in range(0, n - 1, 2):
        pair = rho[k] + rho[k + 1]
        if pair <= 0:
            break
        tau += 2 * pair
    tau = max(tau, 1.0)
    return n / tau, tau


def f_test(rss_small: float, rss_big: float, dp: int, n_eff: float, p_big: int
           ) -> Tuple[float, float]:
    """``(F, p-value)`` of the nested comparison (see the module docstring)."""
    f, log_p = f_test_log(rss_small, rss_big, dp, n_eff, p_big)
    return f, float(np.exp(log_p))


def f_test_log(rss_small: float, rss_big: float, dp: int, n_eff: float, p_big: int
               ) -> Tuple[float, float]:
    """``(F, log p-value)`` (the log keeps very small p-values apart)."""
    dof = n_eff - p_big
    if dp <= 0 or dof <= 0:
        raise BadInputError(f'F-test needs dp > 0 and n_eff > p_big (dp {dp}, n_eff '
                            f'{n_eff:.1f}, p_big {p_big})')
    f = ((rss_small - rss_big) / dp) / (max(rss_big, 1e-300) / dof)
    return float(f), float(stats.f.logsf(max(f, 0.0), dp, dof))


@dataclass
class Test:
    """One candidate of one step: ``unit`` from ``level_from`` to ``level_to``."""

    step: int
    unit: str
    level_from: str
    level_to: str
    dp: int
    statistic: float  # F (f_test) or mean held-out decrease / its std error (validation)
    p_value: Optional[float]  # None with the validation criterion
    rss_small: float
    rss_big: float
    effect: float = 0.0  # change of what the candidate adds, in tolerances (>= 1: matters)
    spread: float = 0.0  # largest change of the unit's mass or COM, in prior spreads
    accepted: bool = False
    alike: List[str] = field(default_factory=list)  # levels fitting as well (accepted only)
    paired_with: Optional[str] = None  # the other unit of a two-unit move (its test is both)


def nested_test(step: int, unit: str, small, big, level_small: str, level_big: str,
                criterion: str, n_eff: float, nf: int) -> Tuple[Test, float]:
    """``(test, log p-value)`` of fit ``big`` against the nested fit ``small``, both
    ``(rss, size, per-block held-out RSS, grouped x)`` as :func:`.select.select_levels`
    evaluates them; ``nf`` friction columns eliminated. With ``criterion='validation'`` the
    statistic is the mean per-block held-out decrease over its std error (log p-value 0)."""
    dp = big[1] - small[1]
    if criterion == 'f_test':  # big[1] - 1 + nf free parameters: the mass equality counted
        f, log_p = f_test_log(small[0], big[0], dp, n_eff, big[1] - 1 + nf)
        return Test(step, unit, level_small, level_big, dp, f, float(np.exp(log_p)),
                    small[0], big[0]), log_p
    d = small[2] - big[2]  # per-block held-out decrease
    zval = float(d.mean() / max(d.std(ddof=1) / np.sqrt(d.size), 1e-300))
    return Test(step, unit, level_small, level_big, dp, zval, None, float(small[2].sum()),
                float(big[2].sum())), 0.0
