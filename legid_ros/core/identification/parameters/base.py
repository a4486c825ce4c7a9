"""Base parameters by QR with column pivoting, and standard parameters back with a prior.

For a stacked regressor ``A`` (rows of any kind, standard-parameter columns), QR with column
pivoting ``A E = Q R`` finds the rank ``r`` and ``r`` independent columns; the other columns
are combinations of them: ``A_d = A_b K`` with ``K = R_11^-1 R_12``. The base parameters
``beta = pi_b + K pi_d`` are what the data determines. Standard parameters consistent with an
identified ``beta`` and closest to a prior (scaled): ``min |(pi - pi_prior) / s|^2`` s.t.
``B pi = beta`` with ``B = [I K] E^T``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

import numpy as np
import scipy.linalg as sla

from legid_ros.core.errors import BadInputError, NotIdentifiableError
from legid_ros.core.identification.identifiability import describe


@dataclass
class BaseParameters:
    """Base parameter structure of a regressor.

    Attributes:
        rank: Number of base parameters.
        independent: Indices of the independent standard parameters (pivot order).
        dependent: Indices of the others.
        K: ``(rank, n_dependent)`` with ``A_d = A_b K``.
        B: ``(rank, P)`` map ``beta = B pi``.
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


def base_parameters(a: np.ndarray, names: List[str], scales: Optional[np.ndarray] = None,
                    tol: float = 1e-8) -> BaseParameters:
    """QR with column pivoting of ``A`` (columns scaled by ``scales`` first).

    Args:
        a: Stacked regressor (m, P).
        names: Standard parameter names (P).
        scales: Column scales (typical parameter magnitudes); default ones.
        tol: Relative tolerance on ``|R_ii|`` for the rank.

    Raises:
        NotIdentifiableError: Rank zero (no excitation at all).
    """
    a = np.asarray(a, float)
    if a.ndim != 2 or a.shape[1] != len(names):
        raise BadInputError(f'regressor of shape {a.shape} for {len(names)} parameters')
    s = np.ones(a.shape[1]) if scales is None else np.asarray(scales, float)
    _, r, perm = sla.qr(a * s[None, :], mode='economic', pivoting=True)
    d = np.abs(np.diag(r))
    if d.size == 0 or d[0] == 0:
        raise NotIdentifiableError('regressor is zero', float('inf'), ['all parameters'])
    rank = int(np.sum(d > tol * d[0]))
    ind, dep = perm[:rank], perm[rank:]
    k_scaled = sla.solve_triangular(r[:rank, :rank], r[:rank, rank:])
    # back to unscaled parameters: A_d = A_b K with K = diag(s_b) K_s diag(1/s_d)
    k = s[ind][:, None] * k_scaled / s[dep][None, :]
    b = np.zeros((rank, a.shape[1]))
    b[:, ind] = np.eye(rank)
    b[:, dep] = k
    labels = [describe(b[i] * s / s[ind[i]], names) for i in range(rank)]
    return BaseParameters(rank, ind, dep, k, b, labels)
