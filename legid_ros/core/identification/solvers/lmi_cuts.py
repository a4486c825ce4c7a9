"""Pseudo-inertia LMIs by cutting planes: the consistent parameter QP in small, constant time.

The consistent least squares of :mod:`.sdp` (``J(pi_i) >> eps I`` per link, the pseudo-inertia
LMI) solved as a sequence of QPs instead of one SDP (Kelley's cutting-plane method). For a unit
vector ``v``, ``v^T J(pi_i) v >= eps`` is a *linear* inequality in the link's 10 parameters,
implied by the LMI for every ``v``: each such cut is valid whatever the data, so the cuts are
kept from one solve to the next. One round solves the QP (dense active set, ``quadprog``) on the
mass equality, the box and the cuts kept so far, then checks every link's pseudo-inertia; each
link whose smallest eigenvalue is below ``accept`` gains the cut along that eigenvector.

When a round's solution satisfies every LMI (smallest eigenvalue >= ``accept``), it minimises
the cost over a set that contains ``{J >> eps I}`` while lying in ``{J >> accept I}``: it is the
consistent minimiser up to the margin between ``accept`` and ``eps``. An online update that
moves the solution a little needs zero or one new round; the cost of a round does not depend on
the data length (statistics only). If the rounds do not settle, :class:`CutsNotSettledError`
carries the last iterate and the caller solves the SDP.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import List, Optional

import numpy as np
import quadprog

from legid_ros.core.errors import InfeasibleProblemError, SolverNotConvergedError
from legid_ros.core.identification.solvers.qp import check_bounds
from legid_ros.core.inertial import PARAMS_PER_LINK, PSEUDO_BASIS as _E

EPS_CUT = 1e-7  # [kg.m^2] margin of each cut (the SDP's LMI margin)
ACCEPT = 1e-9  # [kg.m^2] smallest pseudo-inertia eigenvalue accepted as consistent


class CutsNotSettledError(SolverNotConvergedError):
    """The cutting planes did not reach a consistent point within the round limit."""


@dataclass
class CutSolution:
    """Outcome of :meth:`LmiCutQP.solve`.

    Attributes:
        z: Scaled solution ``(pi - pi_cad) / s``.
        rounds: QP solves in this call.
        cuts_added: Cuts added in this call.
        cuts_total: Cuts kept after this call.
        min_eig: Smallest pseudo-inertia eigenvalue over the links [kg.m^2].
        solve_time_s: Time in this call [s].
    """

    z: np.ndarray
    rounds: int
    cuts_added: int
    cuts_total: int
    min_eig: float
    solve_time_s: float


class LmiCutQP:
    """``min z^T P z + 2 q^T z`` s.t. mass equality, box and the LMIs, by kept cutting planes.

    Args:
        pi_cad: Prior standard parameters (10 per link) [SI].
        scales: Parameter scales ``s`` (``pi = pi_cad + s * z``).
        mass_row: Row ``c`` of the mass equality ``c . pi = total`` [-].
        lb, ub: Bounds on ``pi`` (+-inf for none).
        max_rounds: QP rounds per call before :class:`CutsNotSettledError`.
        max_cuts_per_link: Oldest cuts of a link are dropped beyond this count.
        eps: Margin of each cut [kg.m^2].
        accept: Smallest eigenvalue accepted as consistent [kg.m^2] (``<= eps``).
    """

    def __init__(self, pi_cad: np.ndarray, scales: np.ndarray, mass_row: np.ndarray,
                 lb: np.ndarray, ub: np.ndarray, max_rounds: int = 30,
                 max_cuts_per_link: int = 12, eps: float = EPS_CUT, accept: float = ACCEPT):
        self.cad = np.asarray(pi_cad, float)
        self.s = np.asarray(scales, float)
        self.n = self.cad.size
        self.n_links = self.n // PARAMS_PER_LINK
        self.c = np.asarray(mass_row, float)
        self.eps = float(eps)
        self.accept = float(accept)
        self.max_rounds = int(max_rounds)
        self.max_cuts = int(max_cuts_per_link)
        lb = np.asarray(lb, float)
        ub = np.asarray(ub, float)
        self._lb, self._ub = lb, ub
        eye = np.eye(self.n)
        fin_lb, fin_ub = np.isfinite(lb), np.isfinite(ub)
        # static inequality rows (C^T z >= b of quadprog): the box in scaled coordinates
        self._box_rows = np.vstack([eye[fin_lb], -eye[fin_ub]])
        self._box_rhs = np.concatenate([((lb - self.cad) / self.s)[fin_lb],
                                        -((ub - self.cad) / self.s)[fin_ub]])
        self.cuts: List[List[np.ndarray]] = [[] for _ in range(self.n_links)]
        self._eq_rhs = 0.0  # right-hand side of the mass equality in z (set by solve)
        self.refresh()

    @property
    def n_cuts(self) -> int:
        """Cuts kept [-]."""
        return sum(len(c) for c in self.cuts)

    def refresh(self) -> None:
        """Rebuild the cut rows from the kept cut directions."""
        rows, rhs = [], []
        for i, vs in enumerate(self.cuts):
            sl = slice(PARAMS_PER_LINK * i, PARAMS_PER_LINK * (i + 1))
            for v in vs:
                w = np.einsum('a,kab,b->k', v, _E, v)  # v^T J(p) v = w . p
                row = np.zeros(self.n)
                row[sl] = w * self.s[sl]
                rows.append(row)
                rhs.append(self.eps - float(w @ self.cad[sl]))
        eq_row = (self.c * self.s)[None, :]
        rows = np.array(rows).reshape(-1, self.n)
        # quadprog's layout (C^T z >= b, equality first), kept until the cuts change
        self._cmat_t = np.ascontiguousarray(np.vstack([eq_row, self._box_rows, rows]).T)
        self._bvec = np.concatenate([[self._eq_rhs], self._box_rhs, np.array(rhs, float)])
        self._active = None  # row indices moved: the next QP starts from scratch

    def min_eigs(self, z: np.ndarray):
        """Per link, smallest pseudo-inertia eigenvalue [kg.m^2] and its eigenvector."""
        pi = (self.cad + self.s * z).reshape(self.n_links, PARAMS_PER_LINK)
        jmat = np.einsum('lk,kab->lab', pi, _E)
        w, v = np.linalg.eigh(jmat)
        return w[:, 0], v[:, :, 0]

    def add_cut(self, link: int, v: np.ndarray) -> None:
        """Keep the cut ``v^T J(pi_link) v >= eps`` (oldest of the link dropped past the cap)."""
        vs = self.cuts[link]
        vs.append(np.asarray(v, float) / np.linalg.norm(v))
        if len(vs) > self.max_cuts:
            del vs[0]

    def _qp(self, g: np.ndarray, a: np.ndarray) -> np.ndarray:
        """``min 1/2 z^T g z - a^T z`` s.t. the rows: the last active set first, else quadprog.

        With the constraints of the last solve's active set as equalities, one KKT solve gives
        the candidate; it is the minimiser if it satisfies every row and the multipliers of its
        inequalities are non-negative (the optimality conditions of a convex QP). Otherwise
        quadprog solves from scratch and its active set is kept for the next call.
        """
        cmat, b = self._cmat_t, self._bvec
        if self._active is not None:
            act = self._active
            k = act.size
            kkt = np.zeros((self.n + k, self.n + k))
            kkt[:self.n, :self.n] = g
            kkt[:self.n, self.n:] = -cmat[:, act]
            kkt[self.n:, :self.n] = cmat[:, act].T
            try:
                sol = np.linalg.solve(kkt, np.concatenate([a, b[act]]))
            except np.linalg.LinAlgError:
                sol = None
            if sol is not None and np.all(np.isfinite(sol)):
                z, lam = sol[:self.n], sol[self.n:]
                scale = 1.0 + float(np.max(np.abs(a)))
                slack_ok = np.all(cmat.T @ z >= b - 1e-9 * (1.0 + np.abs(b)))
                dual_ok = np.all(lam[act > 0] >= -1e-9 * scale)  # row 0: the equality
                if slack_ok and dual_ok:
                    return z
        try:
            z, _, _, _, _, iact = quadprog.solve_qp(g, a, cmat, b, 1)[:6]
        except ValueError as exc:  # quadprog: 'constraints are inconsistent, no solution'
            raise InfeasibleProblemError('parameter QP under the LMI cuts is infeasible',
                                         str(exc)) from exc
        act = np.asarray(iact, int) - 1
        self._active = np.union1d([0], act[act >= 0])
        return z

    def solve(self, p: np.ndarray, q: np.ndarray, total: float,
              max_rounds: Optional[int] = None, check: bool = True) -> CutSolution:
        """Minimise ``z^T p z + 2 q^T z`` (``p`` positive definite) under the kept cuts.

        Args:
            p: Scaled Hessian (n, n), positive definite (regularised).
            q: Scaled linear term (n,).
            total: Right-hand side of the mass equality [kg].
            max_rounds: Round limit of this call (default: the instance's).
            check: Check the LMIs and add cuts (False: one QP under the kept cuts, as is).

        Raises:
            CutsNotSettledError: No consistent point within ``max_rounds`` (``last_state``:
                the last scaled iterate).
            InfeasibleProblemError: The total mass lies outside what the bounds reach, or
                quadprog found the constraints inconsistent.
        """
        check_bounds(self._lb, self._ub, self.c, total)
        t0 = time.perf_counter()
        g = np.ascontiguousarray(p + p.T)  # quadprog: 1/2 z^T G z - a^T z
        a = -2.0 * np.asarray(q, float)
        self._eq_rhs = self._bvec[0] = float(total - self.c @ self.cad)
        added = 0
        z = None
        limit = self.max_rounds if max_rounds is None else int(max_rounds)
        for rounds in range(1, limit + 1):
            z = self._qp(g, a)
            if not check:
                return CutSolution(z, rounds, 0, self.n_cuts, float('nan'),
                                   time.perf_counter() - t0)
            eig, vec = self.min_eigs(z)
            bad = np.flatnonzero(eig < self.accept)
            if bad.size == 0:
                return CutSolution(z, rounds, added, self.n_cuts, float(eig.min()),
                                   time.perf_counter() - t0)
            for i in bad:
                self.add_cut(int(i), vec[i])
            added += int(bad.size)
            self.refresh()
        raise CutsNotSettledError('pseudo-inertia cutting planes did not settle',
                                  status=f'{limit} rounds, {added} cuts added',
                                  iterations=limit,
                                  last_state=None if z is None else self.cad + self.s * z)
