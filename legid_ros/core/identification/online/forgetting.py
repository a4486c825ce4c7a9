"""Forgetting defined in time: a sample's weight halves every ``half_life_s`` seconds of data.

The online statistics are sums over samples; with a half-life ``T`` a sample taken at ``t_i``
weighs ``0.5 ** ((t_ref - t_i) / T)`` where ``t_ref`` is the newest sample time folded so far.
The memory therefore depends only on time: not on how many rows are folded per second
(``fold_rate_hz``), on the window length, nor on rows dropped for bad data. ``T = 0`` keeps
everything (a constant parameter set).

A window older than ``t_ref`` by more than ``rebase_s`` (a clock jump back: a new recording,
a restarted simulator) re-bases ``t_ref`` without decaying the statistics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

import numpy as np

from legid_ros.core.errors import BadInputError


@dataclass
class TimeForgetting:
    """Exponential forgetting in time.

    Attributes:
        half_life_s: Time after which a sample weighs half [s] (0: no forgetting).
        rebase_s: A window this much older than the newest folded sample re-bases the clock [s].
        t_ref: Newest sample time folded so far [s] (``-inf`` before the first).
    """

    half_life_s: float = 0.0
    rebase_s: float = 0.5
    t_ref: float = -np.inf

    def __post_init__(self):
        self.half_life_s = check_half_life(self.half_life_s)

    def advance(self, t: np.ndarray) -> Tuple[float, np.ndarray]:
        """Move the reference time to the newest of ``t``.

        Args:
            t: Times of the samples about to be folded (finite) [s].

        Returns:
            ``(decay, weights)``: the factor by which the statistics folded so far must be
            multiplied, and each sample's weight (1 for the newest; all ones without forgetting).
        """
        t = np.asarray(t, float)
        if t.size == 0:
            return 1.0, np.ones(0)
        newest = float(np.max(t))
        decay = 1.0
        if not np.isfinite(self.t_ref) or newest < self.t_ref - self.rebase_s:
            self.t_ref = newest
        elif newest > self.t_ref:
            decay = self.factor(newest - self.t_ref)
            self.t_ref = newest
        age = np.clip(self.t_ref - t, 0.0, None)
        return decay, self.factor(age)

    def factor(self, dt):
        """Weight left after ``dt`` seconds [-] (array or float)."""
        if self.half_life_s <= 0:
            return np.ones_like(dt, dtype=float) if np.ndim(dt) else 1.0
        return 0.5 ** (np.asarray(dt, float) / self.half_life_s) if np.ndim(dt) else \
            float(0.5 ** (dt / self.half_life_s))

    def memory_s(self) -> float:
        """Effective memory length ``T / ln 2`` [s] (``inf`` without forgetting)."""
        return self.half_life_s / np.log(2.0) if self.half_life_s > 0 else float('inf')


def check_half_life(value) -> float:
    """A valid half-life [s] (finite, >= 0), or BadInputError naming the fix."""
    value = float(value)
    if not np.isfinite(value) or value < 0:
        raise BadInputError(f'forgetting half-life {value} s must be finite and >= 0 '
                            '(0 = remember everything)')
    return value
