"""The regularisation weight toward CAD, chosen from the data on a held-out slice.

The prior ``N reg sum ((x - x_cad) / s)^2`` of the ZMP Newton method (Wu & Gao 2021's eq. 9
plus a pull toward CAD) holds the directions the data barely sees; too strong, it also holds
the ones the data sees (bias toward CAD); too weak, the unseen ones wander. The weight is
chosen by held-out validation: the samples are cut into ``n_blocks`` contiguous blocks (filtered
neighbouring samples share their noise, so single samples would leak), every ``every``-th block
is held out, the parameters are fitted on the rest for each weight of a small grid (largest
first, each fit starting from the previous one), and each fit is scored by its mean squared ZMP
residual on the held-out blocks. The weight chosen is the *largest* whose score is within one
standard error (over the held-out blocks) of the best, the one-standard-error rule of
cross-validation: among fits the data cannot tell apart, the one closest to CAD.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, List, Sequence

import numpy as np

from legid_ros.core.errors import BadInputError

REG_GRID_M2 = (1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11)  # [m^2], largest first
DEFAULT_BLOCKS = 40
DEFAULT_EVERY = 4


@dataclass
class RegChoice:
    """Outcome of :func:`choose_reg`.

    Attributes:
        reg: Chosen weight [m^2].
        grid: Weights tried [m^2], largest first.
        scores: Held-out RMS ZMP residual of each [m].
        held_out_fraction: Fraction of the samples held out.
        rule: How ``reg`` was picked from the scores.
        x: Fit on the training blocks at the chosen weight (a start for the final fit).
    """

    reg: float
    grid: List[float] = field(default_factory=list)
    scores: List[float] = field(default_factory=list)
    held_out_fraction: float = 0.0
    rule: str = ''
    x: np.ndarray = None

    def as_info(self) -> dict:
        """Plain form for ``IdentResult.info``."""
        return {'reg_chosen': float(self.reg), 'reg_grid': [float(g) for g in self.grid],
                'reg_scores_mm': [1e3 * float(s) for s in self.scores],
                'reg_held_out_fraction': float(self.held_out_fraction),
                'reg_rule': self.rule}


def held_out_mask(n: int, n_blocks: int = DEFAULT_BLOCKS, every: int = DEFAULT_EVERY
                  ) -> np.ndarray:
    """Boolean mask of the held-out samples: every ``every``-th of ``n_blocks`` contiguous
    blocks, starting with the ``every // 2``-th (so neither end of the run is favoured)."""
    if n < 2 * n_blocks or every < 2:
        raise BadInputError(f'{n} samples are too few for {n_blocks} blocks (every {every})')
    block = np.minimum(np.arange(n) * n_blocks // n, n_blocks - 1)
    return (block % every) == (every // 2)


def choose_reg(fit: Callable, score: Callable, x0: np.ndarray,
               grid: Sequence[float] = REG_GRID_M2, held_out_fraction: float = 0.0
               ) -> RegChoice:
    """The largest weight of ``grid`` within one standard error of the best held-out score.

    Args:
        fit: ``fit(reg, x_start) -> x``: the fit on the training samples.
        score: ``score(x) -> (k,)`` mean squared residual of each of the ``k`` held-out
            blocks [m^2]; a weight's score is their mean (reported as an RMS [m]).
        x0: Start of the first (largest-weight) fit.
        grid: Weights [m^2] (sorted largest first here).
        held_out_fraction: Reported only.
    """
    grid = sorted((float(g) for g in grid), reverse=True)
    if not grid or min(grid) < 0:
        raise BadInputError(f'regularisation grid must be non-empty and >= 0: {grid}')
    xs, blocks = [], []
    x = np.asarray(x0, float)
    for reg in grid:
        x = fit(reg, x)
        xs.append(x)
        blocks.append(np.asarray(score(x), float))
    means = np.array([b.mean() for b in blocks])
    best = int(np.argmin(means))
    k = blocks[best].size
    se = float(blocks[best].std(ddof=1) / np.sqrt(k)) if k > 1 else 0.0
    pick = next(i for i, m in enumerate(means) if m <= means[best] + se)
    return RegChoice(grid[pick], grid, [float(np.sqrt(m)) for m in means], held_out_fraction,
                     'largest weight whose held-out mean squared ZMP residual is within one '
                     f'standard error ({k} blocks) of the best', xs[pick])
