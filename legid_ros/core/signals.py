"""Signal processing for identification: measured ZMP, filters, numerical derivatives,
low-passed orientations.

Conventions: time along axis 0; ground plane ``z = z_ground`` [m] in the world; forces [N],
moments [N.m], positions [m].
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence, Tuple

import numpy as np
from scipy import signal as sps

from legid_ros.core.errors import BadInputError

#: Vertical force [N] below which a foot (or the whole robot) counts as unloaded.
MIN_FZ = 1.0


def zmp_from_sensors(forces: np.ndarray, positions: np.ndarray,
                     min_fz: float = MIN_FZ) -> Tuple[np.ndarray, np.ndarray]:
    """Centre of pressure of point sensors: ``p = sum f_k p_k / sum f_k`` (Wu & Gao 2021).

    Works for one foot or both (stack the sensors of every foot in contact).

    Args:
        forces: Normal forces, shape (N, k) [N].
        positions: Sensor positions on the ground in the world, shape (k, 2|3) (fixed) or
            (N, k, 2|3) (per sample) [m].
        min_fz: Total force below which the ZMP is undefined (NaN) [N].

    Returns:
        ZMP ``(N, 2)`` [m] (NaN where unloaded) and the total normal force ``(N,)`` [N].
    """
    f = np.atleast_2d(np.asarray(forces, float))
    pos = np.asarray(positions, float)[..., :2]
    if pos.ndim == 2:
        pos = np.broadcast_to(pos, (f.shape[0],) + pos.shape)
    if pos.shape[:2] != f.shape:
        raise BadInputError(f'{f.shape[1]} forces but positions of shape {pos.shape}')
    total = f.sum(axis=1)
    with np.errstate(invalid='ignore', divide='ignore'):
        zmp = np.einsum('nk,nkd->nd', f, pos) / total[:, None]
    zmp[total < min_fz] = np.nan
    return zmp, total


def wrench_to_world(wrench: np.ndarray, rotation: np.ndarray, origin: np.ndarray
                    ) -> np.ndarray:
    """Express wrenches measured in a sensor frame in world axes at the world origin.

    Args:
        wrench: ``[f, n]`` in the sensor axes at the sensor origin, (N, 6) [N, N.m].
        rotation: Sensor orientation in the world, (3, 3) or (N, 3, 3).
        origin: Sensor origin in the world, (3,) or (N, 3) [m].

    Returns:
        ``[f, n]`` in world axes about the world origin, (N, 6).
    """
    w = np.atleast_2d(np.asarray(wrench, float))
    rot = np.broadcast_to(rotation, (w.shape[0], 3, 3))
    org = np.broadcast_to(origin, (w.shape[0], 3))
    f = np.einsum('nij,nj->ni', rot, w[:, :3])
    n = np.einsum('nij,nj->ni', rot, w[:, 3:]) + np.cross(org, f)
    return np.hstack([f, n])


def zmp_from_wrench(wrench_world: np.ndarray, z_ground: float = 0.0,
                    min_fz: float = MIN_FZ) -> Tuple[np.ndarray, np.ndarray]:
    """ZMP of a ground-on-robot wrench: the point of the ground where its moment is vertical.

    For double support, sum the feet's wrenches (all about the world origin) first.

    Args:
        wrench_world: ``[f, n]`` in world axes about the world origin, (N, 6) [N, N.m].
        z_ground: Height of the ground plane [m].
        min_fz: Vertical force below which the ZMP is undefined (NaN) [N].

    Returns:
        ZMP ``(N, 2)`` [m] and vertical force ``(N,)`` [N].
    """
    w = np.atleast_2d(np.asarray(wrench_world, float))
    fx, fy, fz, nx, ny = w[:, 0], w[:, 1], w[:, 2], w[:, 3], w[:, 4]
    # moment about p = (px, py, z_ground): n - p x f, whose x and y components vanish:
    # nx - (py fz - z fy) = 0 and ny - (z fx - px fz) = 0
    with np.errstate(invalid='ignore', divide='ignore'):
        px = (z_ground * fx - ny) / fz
        py = (nx + z_ground * fy) / fz
    zmp = np.column_stack([px, py])
    zmp[fz < min_fz] = np.nan
    return zmp, fz


def lag_filter(u: np.ndarray, lam: float, z0: Optional[np.ndarray] = None) -> np.ndarray:
    """First-order lag ("inertial") filter of Wu & Gao 2021: ``z_k = l z_{k-1} + (1 - l) u_k``.

    A non-finite sample costs that sample only: its output is NaN and the state holds over it
    (the filter runs on the last finite input there).

    Args:
        u: Input, shape (N, ...).
        lam: Filter constant ``l`` in [0, 1).
        z0: Initial state (default: the first finite sample).
    """
    if not 0.0 <= lam < 1.0:
        raise BadInputError(f'lag filter constant {lam} not in [0, 1)')
    u = np.asarray(u, float)
    if u.shape[0] == 0:
        return u.copy()
    bad = ~np.isfinite(u)
    x = _hold_last(u, bad) if bad.any() else u
    zi = (x[0] if z0 is None else np.asarray(z0, float)) * lam
    out, _ = sps.lfilter([1.0 - lam], [1.0, -lam], x, axis=0,
                         zi=np.expand_dims(zi, 0))
    if bad.any():
        out[bad] = np.nan
    return out


def _hold_last(x: np.ndarray, bad: np.ndarray) -> np.ndarray:
    """``x`` with each bad entry replaced by the last good one along axis 0 (the first good
    one before any; 0 where a column has none)."""
    flat = x.reshape(x.shape[0], -1)
    bad2 = bad.reshape(flat.shape)
    idx = np.where(~bad2, np.arange(flat.shape[0])[:, None], -1)
    np.maximum.accumulate(idx, axis=0, out=idx)
    first = np.argmax(~bad2, axis=0)
    idx = np.where(idx >= 0, idx, first[None, :])
    out = np.take_along_axis(flat, idx, axis=0)
    out[~np.isfinite(out)] = 0.0
    return out.reshape(x.shape)


def _interp_bad(x: np.ndarray, bad: np.ndarray) -> np.ndarray:
    """``x`` (N, ...) with bad entries linearly interpolated along axis 0 from the nearest good
    ones (held at the ends; 0 where a column has no good sample)."""
    flat = x.reshape(x.shape[0], -1).copy()
    bad2 = bad.reshape(flat.shape)
    k = np.arange(flat.shape[0])
    for c in np.flatnonzero(bad2.any(axis=0)):
        good = ~bad2[:, c]
        flat[bad2[:, c], c] = (np.interp(k[~good], k[good], flat[good, c]) if good.any()
                               else 0.0)
    return flat.reshape(x.shape)


def _sos(cutoff_hz: float, rate_hz: float, order: int) -> np.ndarray:
    if not 0.0 < cutoff_hz < 0.5 * rate_hz:
        raise BadInputError(f'cutoff {cutoff_hz} Hz must lie in (0, {0.5 * rate_hz}) Hz')
    return sps.butter(order, cutoff_hz, fs=rate_hz, output='sos')


def butter_zero_phase(x: np.ndarray, cutoff_hz: float, rate_hz: float,
                      order: int = 4) -> np.ndarray:
    """Zero-phase (forward-backward) Butterworth low-pass along axis 0, for offline use.

    A non-finite sample costs that sample: it is NaN in the output, and the filter runs over
    a linear interpolation there (instead of turning the whole signal NaN).
    """
    x = np.asarray(x, float)
    sos = _sos(cutoff_hz, rate_hz, order)
    padlen = min(3 * (2 * len(sos) + 1), x.shape[0] - 1)
    if padlen < 1:
        return x.copy()
    bad = ~np.isfinite(x)
    if not bad.any():
        return sps.sosfiltfilt(sos, x, axis=0, padlen=padlen)
    out = sps.sosfiltfilt(sos, _interp_bad(x, bad), axis=0, padlen=padlen)
    out[bad] = np.nan
    return out


class CausalButterworth:
    """Causal Butterworth low-pass that keeps its state across calls (online use).

    Args:
        cutoff_hz: Cut-off frequency [Hz].
        rate_hz: Sample rate [Hz].
        order: Filter order.
    """

    def __init__(self, cutoff_hz: float, rate_hz: float, order: int = 2):
        self.sos = _sos(cutoff_hz, rate_hz, order)
        self._zi = None
        self._last: Optional[np.ndarray] = None

    def reset(self) -> None:
        """Forget the state (the next sample initialises the filter at steady state)."""
        self._zi = None
        self._last = None

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Filter the next chunk ``x`` (N, ...) and return it, continuing the state.

        A non-finite sample is NaN in the output and the filter holds the last finite input
        over it, so the state is never poisoned.
        """
        x = np.asarray(x, float)
        if x.shape[0] == 0:
            return x.copy()
        bad = ~np.isfinite(x)
        if bad.any():
            held = _hold_last(x, bad)
            if self._last is not None:  # before the chunk's first good sample: the last one
                flat_bad = bad.reshape(x.shape[0], -1)
                lead = np.cumsum(~flat_bad, axis=0) == 0
                held.reshape(lead.shape)[lead] = np.broadcast_to(
                    self._last.reshape(1, -1), lead.shape)[lead]
            x_in = held
        else:
            x_in = x
        if self._zi is None:
            zi = sps.sosfilt_zi(self.sos)  # (sections, 2)
            self._zi = zi.reshape(zi.shape + (1,) * (x.ndim - 1)) * x_in[0]
        y, self._zi = sps.sosfilt(self.sos, x_in, axis=0, zi=self._zi)
        self._last = x_in[-1].copy()
        if bad.any():
            y[bad] = np.nan
        return y


def _dt(t: np.ndarray) -> float:
    t = np.asarray(t, float)
    if t.ndim != 1 or t.size < 3:
        raise BadInputError('need at least 3 samples to differentiate')
    d = np.diff(t)
    if np.any(d <= 0):
        raise BadInputError('sample times must increase strictly')
    return float(d.mean())


def finite_differences(t: np.ndarray, x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """First and second derivatives by second-order central differences (one-sided at ends).

    Args:
        t: Sample times [s], (N,) (may be non-uniform).
        x: Signal, (N, ...).

    Returns:
        ``(dx/dt, d2x/dt2)`` with the shape of ``x``.
    """
    _dt(t)
    x = np.asarray(x, float)
    xd = np.gradient(x, t, axis=0, edge_order=2)
    xdd = np.gradient(xd, t, axis=0, edge_order=2)
    return xd, xdd


def savgol_derivatives(t: np.ndarray, x: np.ndarray, window_s: float = 0.1,
                       polyorder: int = 3, at: Optional[np.ndarray] = None
                       ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Smoothed signal and its first two derivatives by a Savitzky-Golay filter.

    Assumes (nearly) uniform sampling; the window is made odd and at least ``polyorder + 2``.
    A non-finite value costs only the outputs whose fit would use it (per column): NaN at that
    sample and its neighbours within half a window (within the first or last window, the
    whole edge fit), never the whole signal.

    Args:
        t: Sample times [s], (N,).
        x: Signal, (N, ...).
        window_s: Window length [s].
        polyorder: Polynomial order (>= 2 for the second derivative).
        at: Sample indices (sorted or not) whose outputs are wanted (default every sample):
            the same fits, evaluated only there (a tenth of the work when keeping every
            tenth sample).

    Returns:
        ``(x_smooth, dx/dt, d2x/dt2)``, each (N, ...) or (len(at), ...).
    """
    dt = _dt(t)
    x = np.asarray(x, float)
    n = x.shape[0]
    win = int(round(window_s / dt)) | 1
    win = max(win, polyorder + 2 + (polyorder % 2 == 0))
    if win % 2 == 0:
        win += 1
    if win > n:
        win = n if n % 2 else n - 1
    if win <= polyorder:
        raise BadInputError(f'{n} samples are too few for a Savitzky-Golay fit of order '
                            f'{polyorder}')
    bad = ~np.isfinite(x)
    x_in = _interp_bad(x, bad) if bad.any() else x
    if at is None:
        out = [sps.savgol_filter(x_in, win, polyorder, deriv=k, delta=dt, axis=0,
                                 mode='interp') for k in (0, 1, 2)]
    else:
        at = np.asarray(at, np.int64).reshape(-1)
        if at.size and (at.min() < 0 or at.max() >= n):
            raise BadInputError(f'sample indices outside 0..{n - 1}')
        out = _savgol_at(x_in, win, polyorder, dt, at)
    if bad.any():
        cost = _fit_support(bad, win)
        if at is not None:
            cost = cost[at]
        for y in out:
            y[cost] = np.nan
    return out[0], out[1], out[2]


def _savgol_at(x: np.ndarray, win: int, polyorder: int, dt: float, at: np.ndarray,
               block: int = 512) -> list:
    """:func:`scipy.signal.savgol_filter` (``mode='interp'``) outputs of derivative orders
    0, 1, 2 at the samples ``at`` only: centred fits inside, scipy's own edge fits over the
    first and last ``win`` samples."""
    n, half = x.shape[0], win // 2
    coeffs = np.stack([sps.savgol_coeffs(win, polyorder, deriv=k, delta=dt, use='dot')
                       for k in (0, 1, 2)], axis=1)  # (win, 3)
    out = np.empty((3, at.size) + x.shape[1:])
    inner = np.flatnonzero((at >= half) & (at < n - half))
    windows = np.lib.stride_tricks.sliding_window_view(x, win, axis=0)  # (n-win+1, ..., win)
    for s in range(0, inner.size, block):
        rows = inner[s:s + block]
        fit = windows[at[rows] - half] @ coeffs  # (b, ..., 3)
        out[:, rows] = np.moveaxis(fit, -1, 0)
    for lo, edge in ((0, at < half), (n - win, at >= n - half)):
        if np.any(edge):
            seg = x[lo:lo + win]
            for k in range(3):
                out[k, edge] = sps.savgol_filter(seg, win, polyorder, deriv=k, delta=dt,
                                                 axis=0, mode='interp')[at[edge] - lo]
    return [out[0], out[1], out[2]]


def _fit_support(bad: np.ndarray, win: int) -> np.ndarray:
    """Outputs (N, ...) of a centred ``win``-sample fit (edge fits over the first and last
    ``win`` samples, scipy's ``mode='interp'``) that use at least one bad input."""
    n = bad.shape[0]
    half = win // 2
    b = bad.reshape(n, -1).astype(np.int64)
    c = np.vstack([np.zeros((1, b.shape[1]), np.int64), np.cumsum(b, axis=0)])
    k = np.arange(n)
    lo = np.clip(k - half, 0, n)
    hi = np.clip(k + half + 1, 0, n)
    edge_lo = k < half
    edge_hi = k >= n - half
    lo[edge_lo], hi[edge_lo] = 0, win
    lo[edge_hi], hi[edge_hi] = n - win, n
    hit = (c[hi] - c[lo]) > 0
    return hit.reshape(bad.shape)


def derivatives(t: np.ndarray, x: np.ndarray, method: str = 'savgol',
                window_s: float = 0.1, at: Optional[np.ndarray] = None
                ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x, xd, xdd)`` by ``method`` 'savgol' (smoothed) or 'fd' (central differences), at
    the samples ``at`` (default all)."""
    if method == 'savgol':
        return savgol_derivatives(t, x, window_s, at=at)
    if method == 'fd':
        xd, xdd = finite_differences(t, x)
        x = np.asarray(x, float)
        if at is not None:
            return x[at], xd[at], xdd[at]
        return x, xd, xdd
    raise BadInputError(f'unknown differentiation method {method!r} (savgol, fd)')


def finite_rows(*arrays: Sequence[np.ndarray], limit: float = np.inf) -> np.ndarray:
    """Boolean mask of samples (axis 0) where every given array is finite (and, with
    ``limit``, below it in magnitude)."""
    mask = None
    for a in arrays:
        if a is None:
            continue
        a = np.asarray(a, float).reshape(np.shape(a)[0], -1)
        ok = (np.abs(a) < limit).all(axis=1) if np.isfinite(limit) else \
            np.isfinite(a).all(axis=1)
        mask = ok if mask is None else mask & ok
    return mask


def smooth_quaternions(quat: np.ndarray, smoother: Callable[[np.ndarray], np.ndarray]
                       ) -> np.ndarray:
    """Orientations ``[x, y, z, w]`` (N, 4) through a linear low-pass ``smoother``.

    Each sample's sign is made continuous with the previous finite one (``q`` and ``-q`` are
    one rotation), the components smoothed, the result normalised: right for the small
    rotations a low-pass spans (an IMU's jitter under a 6 Hz cut-off). A non-finite row stays
    where the smoother leaves it (a NaN-aware smoother keeps it NaN).

    Args:
        quat: Orientations ``[x, y, z, w]`` (N, 4).
        smoother: Linear low-pass along axis 0, (N, 4) -> (M, 4) (e.g. its values at M rows).

    Returns:
        Unit quaternions (M, 4).
    """
    q = np.array(quat, float)
    ok = np.flatnonzero(np.isfinite(q).all(axis=1))
    if ok.size > 1:
        flip = np.cumprod(np.where(np.sum(q[ok[1:]] * q[ok[:-1]], axis=1) < 0, -1.0, 1.0))
        q[ok[1:]] *= flip[:, None]
    s = np.asarray(smoother(q), float)
    norm = np.linalg.norm(s, axis=1, keepdims=True)
    with np.errstate(invalid='ignore', divide='ignore'):
        return np.where(norm > 0, s / norm, np.nan)
