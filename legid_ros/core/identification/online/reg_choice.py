"""The online prior weight toward CAD, chosen from the folded rows on held-out seconds.

The batch ZMP Newton chooses its weight on the grouped sets by held-out validation
(:mod:`legid_ros.core.identification.solvers.reg_choice`); the online estimator keeps only
sufficient statistics, so it folds its first rows twice: into the statistics it solves, and,
per second of data, into that second's statistics. Once :data:`~.solve.AUTO_SELECT_SAMPLES`
samples are folded, the last of those seconds (one in :data:`EVERY`, at least two) are held
out and the set is fitted on the seconds before them at each weight of the batch grid and
scored by its mean squared residual on the held-out seconds, one weight per update (an update
that fitted all six took 185 ms in ``make demo``, six times a plain one); the weight of the
least score is kept from then on. The held-out seconds come after the training ones, not
between them: interleaved, each shared the motion of its neighbours in training, and the score
rewarded fitting that motion (on ``make demo``'s setup, seeds 1 and 3 chose the grid's smallest
weights, 1e-10 and 1e-11 m^2, with the held-out RMS still falling, and ended 2.70 and 0.94 kg
off in their group masses; held out at the end, 1e-7 and 1e-8 m^2, 0.285 and 0.368 kg).
(The batch's rule, the largest weight within one standard error of the best, took the grid's
largest on Solo12's 30 s: the seconds' scatter is the motion's, not the fits'; paired over the
seconds it kept the default 1e-7 m^2, which validates at 1.31x the true parameters' deviation
against 1.04x at the least score's 1e-8.) A fixed weight, the prior of a saved state or an
explicit ``reg`` skip the choice.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional

import numpy as np

from legid_ros.core.errors import LegidError
from legid_ros.core.identification.solvers.reg_choice import (DEFAULT_EVERY, REG_GRID_M2,
                                                              RegChoice)

BLOCK_S = 1.0  # [s] length of a held-out or training block of data
EVERY = DEFAULT_EVERY  # one block in EVERY is held out (the batch's share), the last ones
MIN_HELD = 2  # least held-out blocks
#: Held-out RMS residuals within this fraction of the least are a tie, broken toward CAD (the
#: largest weight): between 1e-8 and 1e-11 m^2 the scores of a standing run differ by 0.01-0.2 %
#: and the least of them fell on another weight for another sampling of the same run
TIE_RTOL = 0.005


class HeldOutReg:
    """Per-second statistics of the first folded rows, and the weight they choose.

    Args:
        n_params: Columns of the rows (standard parameters).
        select_after: Folded samples before the choice.
        block_s: Block length [s].
        every: One block in ``every`` is held out (the last ones, at least :data:`MIN_HELD`).
    """

    def __init__(self, n_params: int, select_after: float, block_s: float = BLOCK_S,
                 every: int = EVERY):
        self.select_after = float(select_after)
        self.block_s, self.every = float(block_s), int(every)
        # the seconds that may still be held out, each apart; the older ones summed (training)
        self.blocks: Dict[int, List] = {}
        self.train: List = [np.zeros((n_params, n_params)), np.zeros(n_params), 0.0, 0.0]
        self.n_merged = 0
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
        for k in np.unique(block):
            rows = block == k
            _add(self.blocks.setdefault(int(k), [0.0, 0.0, 0.0, 0.0]), a[rows], b[rows],
                 float(np.sum(rows)) / per)
        self.n += t.size
        # a second that can no longer be among the last ones joins the training sum (the held
        # count grows by one in EVERY seconds: the training ones never become held out)
        while self.blocks and self.n_merged < self._count() - self._n_held() - 1:
            k = min(self.blocks)
            _add_stats(self.train, self.blocks.pop(k))
            self.n_merged += 1

    def _count(self) -> int:
        """Seconds folded so far."""
        return self.n_merged + len(self.blocks)

    def _n_held(self) -> int:
        """Blocks held out (the last ones)."""
        return max(MIN_HELD, int(round(self._count() / self.every)))

    @property
    def pending(self) -> bool:
        """Whether the fits have begun (:meth:`begin`) and the choice is not made yet."""
        return self._fits is not None

    def ready(self) -> bool:
        """Whether enough samples, and seconds for at least :data:`MIN_HELD` held out after
        ``every - 1`` times as many training ones, are folded to begin."""
        return (self.choice is None and self._fits is None and self.n >= self.select_after
                and self._count() >= self.every * MIN_HELD)

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
        keys = sorted(self.blocks)
        cut = max(len(keys) - self._n_held(), 0)
        held = [self.blocks[k] for k in keys[cut:]]
        for k in keys[:cut]:
            _add_stats(self.train, self.blocks[k])
        self._fits = {'solve': solve, 'sigma': float(sigma), 'x': np.asarray(x0, float),
                      'train': self.train, 'blocks': held, 'means': [], 'xs': [],
                      'held_fraction': sum(blk[3] for blk in held) / max(self.n, 1.0)}
        self.train, self.blocks = None, {}

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
                                f'({len(st["blocks"])} held-out seconds, the last ones)', xs[pick])
        return self.choice

    def choose(self, solve: Callable, sigma: float, x0: np.ndarray) -> Optional[RegChoice]:
        """Every fit at once: :meth:`begin`, then :meth:`advance` through the grid."""
        self.begin(solve, sigma, x0)
        return self.advance(len(REG_GRID_M2))


def _add_stats(acc: List, other: List) -> None:
    """``acc += other`` (``[a^T a, a^T b, b^T b, n]`` statistics)."""
    for i in range(4):
        acc[i] = acc[i] + other[i]


def _add(acc: List, a: np.ndarray, b: np.ndarray, n: float) -> None:
    """``acc += [a^T a, a^T b, b^T b, n]``."""
    acc[0] = acc[0] + a.T @ a
    acc[1] = acc[1] + a.T @ b
    acc[2] = acc[2] + float(b @ b)
    acc[3] = acc[3] + n
