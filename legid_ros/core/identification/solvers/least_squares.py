"""Least squares through the normal equations, and the condition number of a tall matrix.

Used where the matrix is tall and the solve repeated (the fixed-base leg's robust loops,
relative standard deviations and F-test of Zhu & Zhang in
:mod:`legid_ros.core.identification.identifiability`, the excitation design's cost): a
Cholesky of ``A^T A`` is far cheaper than a QR/SVD of ``A`` when BLAS threads compete for
cores.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg


def solve_ls(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least squares ``min |a x - y|`` via the normal equations (Cholesky).

    Much cheaper than a QR/SVD of the tall matrix when BLAS threads compete for cores; falls
    back to ``lstsq`` on the small normal matrix when it is not positive definite.
    """
    ata = a.T @ a
    aty = a.T @ y
    try:
        c = scipy.linalg.cho_factor(ata)
        return scipy.linalg.cho_solve(c, aty)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(ata, aty, rcond=None)[0]


def cond_ne(a: np.ndarray) -> float:
    """2-norm condition number of a tall matrix from the eigenvalues of ``a^T a``."""
    ev = np.linalg.eigvalsh(a.T @ a)
    if ev[0] <= 0:
        return float('inf')
    return float(np.sqrt(ev[-1] / ev[0]))
