"""Base parameters by QR with column pivoting, and standard parameters back with a prior.

For a stacked regressor ``A`` (rows of any kind, standard-parameter columns), QR with column
pivoting ``A E = Q R`` finds the rank ``r`` and ``r`` independent columns; the other columns
are combinations of them: ``A_d = A_b K`` with ``K = R_11^-1 R_12``. The base parameters
``beta = pi_b + K pi_d`` are what the data determines. Standard parameters consistent with an
identified ``beta`` and closest to a prior (scaled): ``min |(pi - pi_prior) / s|^2`` s.t.
``B pi = beta`` with ``B = [I K] E^T``.

Two uses of the same routine: the floating-base robots' plain LS baseline
(:func:`legid_ros.core.identification.solvers.standard.solve_base`, the recorded rows,
columns scaled by typical magnitudes) and the fixed-base geared leg
(:func:`legid_ros.core.identification.fixed_base.leg_base_parameters`, random states within
the joint limits, columns scaled to unit norm, independent parameters in ascending order),
as in the two-step identification of a geared leg (Xiao, Qian & Luo 2025).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Union

import numpy as np
import scipy.linalg as sla

from legid_ros.core.errors import BadInputError, NotIdentifiableError
from legid_ros.core.identification.identifiability import describe


@dataclass
class BaseParameters:
    """Base parameter structure of a regressor.

    Attributes:
        rank: Number of base parameters.
        independent: Indices of the independent standard parameters (pivot order, or
            ascending).
        dependent: Indices of the others (pivot order).
        K: ``(rank, n_dependent)`` with ``A_d = A_b K``.
        B: ``(rank, P)`` map ``beta = B pi``; ``B[:, independent] = I``.
        names: One readable combination per base parameter.
    """

    rank: int
    independent: np.ndarray
    dependent: np.ndarray
    K: np.ndarray
    B: np.ndarray
    names: List[str]

    def beta(self, pi: np.ndarray) -> np.ndarray:
        """Base parameters of a standard vector."""
        return self.B @ pi

    def regressor(self, a: np.ndarray) -> np.ndarray:
        """Columns of ``A`` multiplying the base parameters (``A pi = A_b beta``)."""
        return a[:, self.independent]

    def to_standard(self, beta: np.ndarray, pi_prior: np.ndarray,
                    scales: Optional[np.ndarray] = None) -> np.ndarray:
        """Standard parameters with ``B pi = beta`` closest to ``pi_prior`` (scaled norm)."""
        s = np.ones(pi_prior.size) if scales is None else np.asarray(scales, float)
        bs = self.B * s[None, :]
        corr = bs.T @ np.linalg.solve(bs @ bs.T, beta - self.B @ pi_prior)
        return pi_prior + s * corr


def base_parameters(a: np.ndarray, names: List[str],
                    scales: Union[None, str, np.ndarray] = None, tol: float = 1e-8,
                    ascending: bool = False, zero_below: float = 0.0,
                    full_names: bool = False) -> BaseParameters:
    """QR with column pivoting of ``A`` (columns scaled first).

    Args:
        a: Stacked regressor (m, P).
        names: Standard parameter names (P).
        scales: Column scales (typical parameter magnitudes) multiplying the columns; None
            for ones; ``'norm'`` divides every column by its norm (zero columns by one).
        tol: Relative tolerance on ``|R_ii|`` for the rank.
        ascending: Sort the independent parameters (and the rows of ``B``) by index
            instead of pivot order.
        zero_below: Entries of ``B`` below this magnitude are set to zero.
        full_names: Name each base parameter by its independent parameter and every
            nonzero dependent coefficient (``'m_a +0.5 m_b'``) instead of its three largest
            scaled components.

    Raises:
        BadInputError: Regressor and names disagree, unknown ``scales`` string.
        NotIdentifiableError: Rank zero (no excitation at all).
    """
    a = np.asarray(a, float)
    if a.ndim != 2 or a.shape[1] != len(names):
        raise BadInputError(f'regressor of shape {a.shape} for {len(names)} parameters')
    if isinstance(scales, str):
        if scales != 'norm':
            raise BadInputError(f"scales must be an array, None or 'norm', not {scales!r}")
        div = np.linalg.norm(a, axis=0)
        div[div == 0] = 1.0
        s = 1.0 / div
        scaled = a / div
    else:
        div = None
        s = np.ones(a.shape[1]) if scales is None else np.asarray(scales, float)
        scaled = a * s[None, :]
    _, r, perm = sla.qr(scaled, mode='economic', pivoting=True)
    d = np.abs(np.diag(r))
    if d.size == 0 or d[0] == 0:
        raise NotIdentifiableError('regressor is zero', float('inf'), ['all parameters'])
    rank = int(np.sum(d > tol * d[0]))
    ind, dep = perm[:rank], perm[rank:]
    k_scaled = sla.solve_triangular(r[:rank, :rank], r[:rank, rank:])
    # back to unscaled parameters: A_d = A_b K with K = diag(s_b) K_s diag(1/s_d)
    if div is None:
        k = s[ind][:, None] * k_scaled / s[dep][None, :]
    else:
        k = k_scaled * div[dep][None, :] / div[ind][:, None]
    if ascending:
        order = np.argsort(ind)
        ind, k = ind[order], k[order]
    b = np.zeros((rank, a.shape[1]))
    b[np.arange(rank), ind] = 1.0
    b[:, dep] = k
    if zero_below > 0:
        b[np.abs(b) < zero_below] = 0.0
    if full_names:
        labels = [' '.join([names[ind[i]]] + [f'{b[i, c]:+.3g} {names[c]}' for c in dep
                                               if b[i, c] != 0]) for i in range(rank)]
    else:
        labels = [describe(b[i] * s / s[ind[i]], names) for i in range(rank)]
    return BaseParameters(rank, ind, dep, b[:, dep].copy(), b, labels)
