"""Batch primitives of the buffer: a time-sorted sample stream and a causal first-order lag.

Both work on a batch of rows at a time (numpy, no per-row Python loop), which is what keeps
the buffer node's 1 kHz input path cheap.
"""

from __future__ import annotations

import bisect
import math
from typing import List, Optional, Sequence, Tuple

import numpy as np
from scipy.signal import lfilter


class Stream:
    """Time-sorted history of one auxiliary stream (stamps [s], tuples of values)."""

    def __init__(self, width: int, history: int):
        self.width = width
        self.history = history
        self.t: List[float] = []
        self.v: List[Sequence[float]] = []

    def reset(self) -> None:
        """Forget every sample."""
        self.t.clear()
        self.v.clear()

    def newest(self) -> float:
        """Stamp of the newest sample [s] (-inf if none)."""
        return self.t[-1] if self.t else -math.inf

    def add(self, stamp: float, values: Sequence[float]) -> str:
        """Insert a sample; returns '' or the event it caused (sample dropped if duplicate).

        Returns 'nonfinite' (dropped), 'duplicate_stamp' (dropped), 'out_of_order_stamp'
        (kept, inserted in order) or ''.
        """
        if not (math.isfinite(stamp) and all(map(math.isfinite, values))):
            return 'nonfinite'
        if self.t and stamp <= self.t[-1]:
            i = bisect.bisect_left(self.t, stamp)
            if i < len(self.t) and self.t[i] == stamp:
                return 'duplicate_stamp'
            self.t.insert(i, stamp)
            self.v.insert(i, values)
            event = 'out_of_order_stamp'
        else:
            self.t.append(stamp)
            self.v.append(values)
            event = ''
        if len(self.t) > 2 * self.history:
            del self.t[:-self.history]
            del self.v[:-self.history]
        return event

    def sample(self, ts: np.ndarray, stale_after: float) -> Tuple[np.ndarray, np.ndarray]:
        """Values at the stamps ``ts`` (sorted) [s] and whether each is fresh.

        Linear interpolation between the bracketing samples; before the first or after the
        last sample the nearest one is held. A value is fresh when the held sample is at most
        ``stale_after`` [s] away, or the bracketing samples are at most ``2 stale_after``
        apart. No sample at all: NaN, not fresh.
        """
        n = len(ts)
        if not self.t:
            return np.full((n, self.width), np.nan), np.zeros(n, bool)
        lo = max(bisect.bisect_left(self.t, ts[0]) - 1, 0)
        hi = min(bisect.bisect_right(self.t, ts[-1]) + 1, len(self.t))
        st = np.array(self.t[lo:hi])
        sv = np.array(self.v[lo:hi], float).reshape(len(st), self.width)
        i = np.searchsorted(st, ts, side='left')
        m = len(st)
        i1 = np.minimum(i, m - 1)
        i0 = np.maximum(i - 1, 0)
        t0, t1 = st[i0], st[i1]
        span = t1 - t0
        with np.errstate(invalid='ignore', divide='ignore'):
            w = np.where(span > 0, (ts - t0) / np.where(span > 0, span, 1.0), 1.0)
        w = np.clip(w, 0.0, 1.0)
        vals = (1 - w)[:, None] * sv[i0] + w[:, None] * sv[i1]
        inside = (i > 0) & (i < m)
        fresh = np.where(inside, span <= 2 * stale_after,
                         np.abs(np.where(i == 0, t1, t0) - ts) <= stale_after)
        return vals, fresh


class Lag:
    """Causal first-order lag ``z_k = l z_{k-1} + (1 - l) u_k``, ``l = exp(-2 pi fc dt)``.

    ``dt`` is the batch's mean step. NaN inputs hold the previous output (and stay NaN in the
    result); the first finite input initialises the state.
    """

    def __init__(self, cutoff_hz: float):
        self.cutoff = cutoff_hz
        self.state: Optional[np.ndarray] = None

    def reset(self) -> None:
        """Forget the state."""
        self.state = None

    def __call__(self, u: np.ndarray, dt: float) -> np.ndarray:
        """Filter a batch ``u`` (n, width) sampled every ``dt`` [s]."""
        if self.cutoff <= 0 or len(u) == 0:
            return u
        n, width = u.shape
        bad = ~np.isfinite(u)
        cols = np.arange(width)
        if self.state is None:
            self.state = np.full(width, np.nan)
        state = self.state
        unset = ~np.isfinite(state)
        if unset.any():
            first = u[np.argmax(~bad, axis=0), cols]
            state = np.where(unset & (~bad).any(axis=0), first, state)
        x = u
        if bad.any():
            idx = np.where(~bad, np.arange(n)[:, None], -1)
            np.maximum.accumulate(idx, axis=0, out=idx)
            x = np.where(idx >= 0, u[np.maximum(idx, 0), cols], state[None, :])
        lam = math.exp(-2 * math.pi * self.cutoff * dt) if dt > 0 else 1.0
        y, _ = lfilter([1 - lam], [1.0, -lam], x, axis=0, zi=(lam * state)[None, :])
        self.state = y[-1].copy()
        y[bad] = np.nan
        return y
