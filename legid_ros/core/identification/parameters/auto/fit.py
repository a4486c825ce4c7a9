"""Fitting an auto set (:mod:`.levels`) on the rows' normal equations, friction eliminated:
what each candidate of the selection (:mod:`.select`) costs one of.

- :class:`Problem`: the normal equations of some rows (or given folded statistics);
- :func:`fit`: Newton on them with the total-mass equality and a negligible pull toward CAD;
- :func:`residual`: the whitened residual of rows at a standard-parameter vector.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from legid_ros.core.identification.parameters.auto.levels import AutoSet
from legid_ros.core.identification.rows.linear import Rows, fold_rows

#: Pull toward CAD of the selection fits per row and scale unit [-] (keeps the Newton systems
#: regular; the F-test compares the data's fits)
SELECT_REG = 1e-6


class Problem:
    """Normal equations of some rows, friction eliminated, for fitting auto sets."""

    def __init__(self, rows: Optional[Rows], weights=None, sel=None, normal=None):
        if normal is not None:  # (H_pi, h_pi, bb, n) already folded, friction eliminated
            self.hs, self.gs, self.bb, self.n = normal
            self.npi, self.recover = self.hs.shape[0], lambda pi: None
            return
        sub = Rows(rows.A[sel], rows.b[sel], rows.group[sel], int(sel.sum()), rows.nf,
                   rows.kind)
        normal = fold_rows(sub, weights[sel])
        self.npi = rows.A.shape[1] - rows.nf
        self.hs, self.gs, self.recover = normal.eliminate(self.npi)
        self.bb = normal.bb
        if rows.nf:
            hf = normal.h[self.npi:]
            self.bb -= float(hf @ np.linalg.solve(
                normal.H[self.npi:, self.npi:] + 1e-12 * np.eye(rows.nf), hf))
        self.n = int(sel.sum())


def fit(problem: Problem, param: AutoSet, total_mass: float, x0=None):
    """``(x, pi, rss)`` of the auto set ``param`` on ``problem``."""
    from legid_ros.core.identification.solvers.newton import newton_solve
    from legid_ros.core.identification.solvers.zmp_newton import NormalObjective
    obj = NormalObjective(problem.hs, problem.gs, problem.bb, problem.n, param, SELECT_REG)
    lb, ub = param.bounds()
    start = param.cad() if x0 is None else x0
    res = newton_solve(obj, start, param.mass_row(), total_mass - param.fixed_mass, lb, ub,
                       scales=param.scales(), fallback='gauss_newton', max_iter=100)
    pi = param.to_standard(res.x)
    rss = float(pi @ problem.hs @ pi - 2 * problem.gs @ pi + problem.bb)
    return res.x, pi, max(rss, 0.0)


def residual(rows: Rows, weights: np.ndarray, sel: np.ndarray, problem: Problem,
              pi: np.ndarray) -> np.ndarray:
    """Whitened residual of the rows ``sel`` at ``pi`` (friction from ``problem``)."""
    fr = problem.recover(pi)
    x = np.concatenate([pi, fr if fr is not None else []])
    return (rows.A[sel] @ x - rows.b[sel]) * np.sqrt(weights[sel])
