"""How much neighbouring folded rows share their noise: the online uncertainty's inflation.

The online estimator keeps sufficient statistics only, so its uncertainty is the white-row
form ``s^2 (A^T A)^-1`` (:func:`~legid_ros.core.identification.uncertainty.normal_uncertainty`).
Rows folded from filtered signals are not white: at 100 Hz from Savitzky-Golay windows of
0.1 s, neighbours share most of their noise, and the white form shrinks with the fold rate
while the error does not. :class:`RowCorrelation` measures the residual's autocovariance at
the current estimate over the stream of folded rows, across windows (lags up to
:data:`MAX_LAG` rows, the estimator's forgetting applied), and its correlation time
``tau = 1 + 2 sum rho_l`` over the lags before the autocorrelation first drops below zero (as
the batch form sizes its blocks: :func:`~legid_ros.core.identification.model_error.
effective_samples`); the uncertainty's residual variance is multiplied by it (the long-run
variance of an average of correlated rows).

Rows folded before the first solve are measured at CAD, whose offset from the truth is a slow,
correlated residual: they count only until rows measured at an estimate exist.
"""

from __future__ import annotations

from typing import Dict

import numpy as np


MAX_LAG = 200  # [rows] longest lag measured (0.2 s of rows folded at 1 kHz)


class _Autocovariance:
    """Lagged sums of a stream of residual rows (one column per row kind)."""

    def __init__(self, per: int = 0):
        self.prod = np.zeros(MAX_LAG + 1)  # sum over kinds of r_t r_(t-l)
        self.pairs = np.zeros(MAX_LAG + 1)
        self.first = 0.0  # sum of r_t over kinds
        self.count = 0.0  # rows x kinds
        self.tail = np.zeros((0, per))

    def decay(self, factor: float) -> None:
        self.prod *= factor
        self.pairs *= factor
        self.first *= factor
        self.count *= factor

    def fold(self, r: np.ndarray) -> None:
        if self.tail.shape[1] != r.shape[1]:
            self.tail = np.zeros((0, r.shape[1]))
        x = np.vstack([self.tail, r])
        new = np.arange(len(self.tail), len(x))
        lag = new[:, None] - np.arange(len(x))[None, :]  # (new rows, every row)
        keep = (lag >= 0) & (lag <= MAX_LAG)
        self.prod += np.bincount(lag[keep], (r @ x.T)[keep], minlength=MAX_LAG + 1)
        self.pairs += r.shape[1] * np.bincount(lag[keep], minlength=MAX_LAG + 1)
        self.first += float(r.sum())
        self.count += r.size
        self.tail = x[-MAX_LAG:]

    def tau(self) -> float:
        """Correlation time [rows] (1 without rows)."""
        if self.count <= 0 or self.pairs[0] <= 0:
            return 1.0
        mean = self.first / self.count
        cov = np.where(self.pairs > 0, self.prod / np.maximum(self.pairs, 1e-300), 0.0) - mean ** 2
        if not cov[0] > 0:
            return 1.0
        rho = cov[1:] / cov[0]
        neg = np.flatnonzero((rho < 0) | (self.pairs[1:] <= 0))
        stop = int(neg[0]) if neg.size else rho.size
        return max(1.0, 1.0 + 2.0 * float(rho[:stop].sum()))


class RowCorrelation:
    """Running correlation time of the folded rows' residual (see the module docstring)."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        """Forget every row."""
        self.streams = {'estimate': _Autocovariance(), 'cad': _Autocovariance()}

    def fold(self, resid: np.ndarray, at_estimate: bool, decay: float = 1.0) -> None:
        """Measure one window's folded rows.

        Args:
            resid: (m, per) residuals of the window's ``m`` folded samples in time order, one
                column per row kind (ZMP x and y, one per joint...).
            at_estimate: Whether the residual is at a solved estimate (else at CAD).
            decay: The estimator's forgetting factor for this window (1: none).
        """
        for stream in self.streams.values():
            stream.decay(decay)
        r = np.asarray(resid, float)
        r = r[:, None] if r.ndim == 1 else r
        if r.size and np.isfinite(r).all():
            self.streams['estimate' if at_estimate else 'cad'].fold(r)

    @property
    def factor(self) -> float:
        """Correlation time of the rows [rows] (at least 1; 1 before any row)."""
        est = self.streams['estimate']
        return (est if est.count > 0 else self.streams['cad']).tau()

    def state(self) -> Dict[str, np.ndarray]:
        """Plain arrays for the estimator's saved state (the lagged sums, not the tail)."""
        out = {}
        for key, s in self.streams.items():
            out[f'corr_{key}'] = np.concatenate([s.prod, s.pairs, [s.first, s.count]])
        return out

    def load(self, state: Dict[str, np.ndarray]) -> None:
        """Restore :meth:`state` (states saved before it, or of another length: forgotten)."""
        self.reset()
        n = MAX_LAG + 1
        for key, s in self.streams.items():
            v = np.asarray(state.get(f'corr_{key}', np.zeros(0)), float)
            if v.size == 2 * n + 2:
                s.prod, s.pairs = v[:n].copy(), v[n:2 * n].copy()
                s.first, s.count = float(v[-2]), float(v[-1])
