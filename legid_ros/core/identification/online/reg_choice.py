"""The online prior weight toward CAD, chosen from the folded rows on held-out seconds.

The batch ZMP Newton chooses its weight on the grouped sets by held-out validation
(:mod:`legid_ros.core.identification.solvers.reg_choice`); the online estimator keeps only
sufficient statistics, so it folds its first rows twice: into the statistics it solves, and,
per second of data, into training statistics or (every :data:`EVERY`-th second) into the
statistics of that held-out second. Once :data:`~.solve.AUTO_SELECT_SAMPLES` samples are
folded, the set is fitted on the training statistics at each weight of the batch grid and
scored by its mean squared residual on the held-out seconds, one weight per update (an update
that fitted all six took 185 ms in ``make demo``, six times a plain one); the weight of the
least score is kept from then on. (The batch's rule, the largest weight within one standard
error of the best, took the grid's largest on Solo12's 30 s: the seconds' scatter is the
motion's, not the fits'; paired over the seconds it kept the default 1e-7 m^2, which validates
at 1.31x the true parameters' deviation against 1.04x at the least score's 1e-8.) A fixed
weight, the prior of a saved state or an explicit ``reg`` skip the choice.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional

import numpy as np

from legid_ros.core.errors import LegidError
from legid_ros.core.identification.solvers.reg_choice import (DEFAULT_EVERY, REG_GRID_M2,
                                                              RegChoice)

BLOCK_S = 1.0  # [s] length of a held-out or training block of data
EVERY = DEFAULT_EVERY  # every EVERY-th block is held out (the batch rule)
#: Held-out RMS residuals within this fraction of the least are a tie, broken toward CAD (the
#: largest weight): between 1e-8 and 1e-11 m^2 the scores of a standing run differ by 0.01-0.2 %
#: and the least of them fell on another weight for another sampling of the same run
TIE_RTOL = 0.005


class HeldOutReg:
    """Training and held-out statistics of the first folded rows, and the weight they choose.

    Args:
        n_params: Columns of the rows (standard parameters).
        select_after: Folded samples before the choice.
        block_s: Block length [s].
        every: Every ``every``-th block is held out.
    """

    def __init__(self, n_params: int, select_after: float, block_s: float = BLOCK_S,
                 every: int = EVERY):
        self.select_after = float(select_after)
        self.block_s, self.every = float(block_s), int(every)
        self.train: List = [np.zeros((n_params, n_params)), np.zeros(n_params), 0.0, 0.0]
        self.held: Dict[int, List] = {}
        self.t0: Optional[float] = None
        self.n = 0.0
        self.choice: Optional[RegChoice] = None
        self._fits: Optional[dict] = None  # the grid's fits once begun (begin, advance)

    def fold(self, t: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
        """Fold rows ``a x = b`` of samples at times ``t`` [s] (``len(a) / len(t)`` rows
        each, in sample order)."""
        t = np.asarray(t, float)
        if self.choice is not None or self._fits is not None or t.size == 0:
            return
        if self.t0 is None:
            self.t0 = float(t[0])
        per = a.shape[0] // t.size
        block = np.repeat(np.floor((t - self.t0) / self.block_s).astype(int), per)
        held = block % self.every == self.every // 2
        _add(self.train, a[~held], b[~held], float(np.sum(~held)) / per)
        for k in np.unique(block[held]):
            rows = block == k
            _add(self.held.setdefault(int(k), [0.0, 0.0, 0.0, 0.0]), a[rows], b[rows],
                 float(np.sum(rows)) / per)
        self.n += t.size

    @property
    def pending(self) -> bool:
        """Whether the fits have begun (:meth:`begin`) and the choice is not made yet."""
        return self._fits is not None

    def ready(self) -> bool:
        """Whether enough samples (and at least two held-out seconds) are folded to begin."""
        return (self.choice is None and self._fits is None and self.n >= self.select_after
                and len(self.held) >= 2)

    def begin(self, solve: Callable, sigma: float, x0: np.ndarray) -> None:
        """Freeze the statistics (nothing more is folded) and start the grid's fits, one or
        more per :meth:`advance`, so that no single update pays for all of them.

        Args:
            solve: ``solve(H, h, bb, n, reg, x_start) -> (x, pi)``: the set fitted on these
                statistics at weight ``reg`` per unit-variance row [-]; what else it reads
                (other rows' statistics, the total mass) should be fixed here too.
            sigma: The rows' scale [m] (a weight [m^2] is ``reg sigma^2``).
            x0: Start of the first fit (set coordinates).
        """
        self._fits = {'solve': solve, 'sigma': float(sigma), 'x': np.asarray(x0, float),
                      'train': self.train, 'blocks': list(self.held.values()), 'means': [],
                      'xs': [],
                      'held_fraction': sum(blk[3] for blk in self.held.values()) / max(
                          self.n, 1.0)}
        self.train, self.held = None, {}

    def advance(self, fits: int = 1) -> Optional[RegChoice]:
        """Fit the next ``fits`` weights of the grid, largest first (each fit starts from the
        last); once all are fitted, choose (the statistics are freed).

        Returns:
            The choice (``reg`` [m^2]; ``x``: the training fit at that weight, a start for the
            estimator's next solve) when it is made by this call and some weight could be
            fitted; None otherwise (before the last fit, or when no weight could be fitted:
            :attr:`choice` is then set with a NaN weight and the estimator keeps its default).
        """
        st = self._fits
        if st is None:
            return None
        grid = sorted(REG_GRID_M2, reverse=True)
        h_tr, g_tr, bb_tr, n_tr = st['train']
        sigma, means, xs = st['sigma'], st['means'], st['xs']
        for reg in grid[len(means):len(means) + max(int(fits), 1)]:
            try:
                st['x'], pi = st['solve'](h_tr, g_tr, bb_tr, n_tr, reg / sigma ** 2, st['x'])
            except LegidError:  # not fitted at this weight: not chosen
                means.append(np.inf)
                xs.append(None)
                continue
            xs.append(np.array(st['x'], float))
            means.append(float(np.mean([sigma ** 2 * (pi @ hk @ pi - 2.0 * gk @ pi + bk) /
                                        max(nk, 1e-12) for hk, gk, bk, nk in st['blocks']])))
        if len(means) < len(grid):
            return None
        self._fits = None
        if not np.isfinite(means).any():
            self.choice = RegChoice(float('nan'))
            return None
        rms = np.sqrt(np.asarray(means, float))
        pick = int(np.flatnonzero(rms <= (1.0 + TIE_RTOL) * np.nanmin(rms))[0])
        self.choice = RegChoice(grid[pick], grid, [float(r) for r in rms],
                                st['held_fraction'], 'largest weight whose held-out RMS ZMP '
                                f'residual is within {100 * TIE_RTOL:g} % of the least '
                                f'({len(st["blocks"])} held-out seconds)', xs[pick])
        return self.choice

    def choose(self, solve: Callable, sigma: float, x0: np.ndarray) -> Optional[RegChoice]:
        """Every fit at once: :meth:`begin`, then :meth:`advance` through the grid."""
        self.begin(solve, sigma, x0)
        return self.advance(len(REG_GRID_M2))


def _add(acc: List, a: np.ndarray, b: np.ndarray, n: float) -> None:
    """``acc += [a^T a, a^T b, b^T b, n]``."""
    acc[0] = acc[0] + a.T @ a
    acc[1] = acc[1] + a.T @ b
    acc[2] = acc[2] + float(b @ b)
    acc[3] = acc[3] + n
