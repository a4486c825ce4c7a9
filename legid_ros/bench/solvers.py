"""``legid bench solvers``: is the bound-constrained Newton right when it says converged?

The Newton of the ZMP identification (Wu & Gao 2021,
:func:`legid_ros.core.identification.solvers.newton.newton_solve`) against an independent
reference (the better of scipy SLSQP and polished OSQP,
:mod:`legid_ros.bench.solver_problems`):

- ``--problems`` random convex least-squares problems with the total-mass equality and a box
  whose bounds are active at the optimum, a third with one variable pinned and a third with
  two (``lb == ub``, as ``--known`` pins a weighed link);
- the real cases: the synthetic biped identified by ``zmp_newton`` (free, with the foot mass
  known, ``known={'m_foot': 1.26}``, with the feet weighed by their ankle F/T) and by the
  torque baseline on the ZMP reduced set; the reference minimises the very cost the Newton
  minimised (captured from the call).

A *false converged* is a run that reports ``converged`` with a cost more than 1e-6 (relative)
above the reference. The same problems are also run through the Newton as it was before the
KKT test (stop on a short step, or after 40 failed halvings, both reported as converged; the
step respected the mass equality only and was clipped to the box afterwards) for the
``old_*`` counts.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from legid_ros.bench.solver_problems import (captured_newton_problems, random_problem,
                                             reference_cost, relative_gap, slsqp)
from legid_ros.core.identification.solvers.newton import newton_solve
from legid_ros.core.identification.solvers.qp import project_mass_box

GAP_TOL = 1e-6  # relative cost above the reference that makes a "converged" false


def add_arguments(parser) -> None:
    """Options of the benchmark."""
    parser.add_argument('--problems', type=int, default=600, help='random problems (>= 500)')
    parser.add_argument('--seed', type=int, default=0, help='random seed')
    parser.add_argument('--no-biped', action='store_true', help='skip the biped cases')


def _old_newton(fun, x0, c, total, lb, ub, scales, eps=1e-4, max_iter=300):
    """The Newton before the KKT test (for the ``old_*`` counts): returns (x, converged)."""
    import scipy.linalg as sla

    x = project_mass_box(np.asarray(x0, float), c, total, lb, ub)
    s = np.asarray(scales, float)
    cs = c * s
    zsc = sla.null_space(cs[None, :])
    proj = s[:, None] * (np.eye(x.size) - np.outer(cs, cs) / (cs @ cs)) * s[None, :]
    val = fun(x)
    for _ in range(max_iter):
        zs = zsc.T @ (s[:, None] * val.hess * s[None, :]) @ zsc
        eig = np.linalg.eigvalsh(0.5 * (zs + zs.T))
        if eig[0] > 1e-10 * max(abs(eig[-1]), 1e-300):
            dx = -s * (zsc @ np.linalg.solve(zs, zsc.T @ (s * val.grad)))
        else:
            dx = -proj @ val.grad
        step = 1.0
        for _ in range(40):
            x_new = project_mass_box(x + step * dx, c, total, lb, ub)
            if fun(x_new, derivatives=False).e <= val.e:
                break
            step *= 0.5
        else:
            return x, True
        moved = float(np.linalg.norm(x_new - x))
        x = x_new
        val = fun(x)
        if moved <= eps:
            return x, True
    return x, False


class _Tally:
    """Counts and gaps of one solver over a set of problems."""

    def __init__(self):
        self.runs = self.converged = self.false_converged = 0
        self.gaps = []
        self.status = {}
        self.times = []

    def add(self, converged: bool, gap: float, status: str = '', time_s: float = 0.0):
        self.runs += 1
        self.converged += int(converged)
        self.false_converged += int(converged and gap > GAP_TOL)
        self.status[status] = self.status.get(status, 0) + 1
        self.times.append(time_s)
        if converged:
            self.gaps.append(gap)

    def figures(self) -> dict:
        gaps = np.asarray(self.gaps) if self.gaps else np.zeros(1)
        return {'runs': self.runs, 'converged': self.converged,
                'false_converged': self.false_converged,
                'max_rel_cost_gap': float(gaps.max()),
                'worst_cost_ratio': float(1.0 + max(gaps.max(), 0.0)),
                'status': dict(self.status),
                'median_time_s': float(np.median(self.times)) if self.times else 0.0}


def _random_cases(n: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    new = {k: _Tally() for k in (0, 1, 2)}
    old = {k: _Tally() for k in (0, 1, 2)}
    for i in range(n):
        pinned = i % 3
        prob = random_problem(rng, n_pinned=pinned)
        ref = reference_cost(prob)
        t0 = time.thread_time()
        res = newton_solve(prob.fun, prob.x0, prob.c, prob.total, prob.lb, prob.ub,
                           scales=prob.scales)
        dt = time.thread_time() - t0
        cost = prob.fun(res.x, derivatives=False).e
        new[pinned].add(res.converged, relative_gap(min(cost, res.cost_history[-1]), ref),
                        res.status, dt)
        x_old, conv_old = _old_newton(prob.fun, prob.x0, prob.c, prob.total, prob.lb, prob.ub,
                                      prob.scales)
        old[pinned].add(conv_old, relative_gap(prob.fun(x_old, derivatives=False).e, ref))
    return {'new': {f'pinned_{k}': t.figures() for k, t in new.items()},
            'old': {f'pinned_{k}': t.figures() for k, t in old.items()}}


def _biped_cases() -> dict:
    from legid_ros.core.identification.api import identify
    from legid_ros.core.identification.prepare import prepare
    from legid_ros.core.robot import load_robot
    from legid_ros.core.synthetic import SyntheticConfig, simulate_biped

    robot = load_robot('biped')
    cases = {}
    for seed in (11, 12):
        run = simulate_biped(SyntheticConfig(duration_s=25.0, rate_hz=50.0, seed=seed))
        samples = prepare(run, robot)
        for label, method, opts in (
                ('zmp_newton', 'zmp_newton', {}),
                ('zmp_newton_known_foot', 'zmp_newton', {'known': {'m_foot': 1.26}}),
                ('zmp_newton_foot_from_ft', 'zmp_newton', {'foot_from_ft': True}),
                ('torque_reduced', 'torque_ls', {'param_set': 'reduced'})):
            store = []
            t0 = time.thread_time()
            with captured_newton_problems(store):
                identify(run, robot, method, samples=samples, **opts)
            dt = time.thread_time() - t0
            call = store[-1]
            res = call['result']
            x_ref = slsqp(call['fun'], call['x0'], call['c'], call['total'], call['lb'],
                          call['ub'], call['scales'])
            ref = call['fun'](x_ref, derivatives=False).e
            cost = call['fun'](res.x, derivatives=False).e
            x_old, conv_old = _old_newton(call['fun'], call['x0'], call['c'], call['total'],
                                          call['lb'], call['ub'], call['scales'])
            cases[f'{label}_seed{seed}'] = {
                'status': res.status, 'converged': bool(res.converged),
                'iterations': int(res.iterations), 'rel_cost_gap': relative_gap(cost, ref),
                'kkt_residual': float(res.kkt_residual), 'time_s': dt,
                'old_converged': bool(conv_old),
                'old_rel_cost_gap': relative_gap(call['fun'](x_old, derivatives=False).e,
                                                 ref)}
    return cases


def run(args) -> dict:
    """Run the benchmark; returns the results dict (``passed`` says if the figures hold)."""
    t0 = time.time()
    n = int(args.problems)
    rand = _random_cases(n, int(args.seed))
    biped = {} if getattr(args, 'no_biped', False) else _biped_cases()
    new = list(rand['new'].values())
    old = list(rand['old'].values())
    real_false = sum(int(c['converged'] and c['rel_cost_gap'] > GAP_TOL)
                     for c in biped.values())
    gaps = [f['max_rel_cost_gap'] for f in new] + [c['rel_cost_gap'] for c in biped.values()
                                                   if c['converged']]
    out = {
        'newton_false_converged': sum(f['false_converged'] for f in new) + real_false,
        'newton_max_rel_cost_gap': float(max(gaps)),
        'newton_not_converged': sum(f['runs'] - f['converged'] for f in new)
        + sum(int(not c['converged']) for c in biped.values()),
        'random_problems': n,
        'random': rand,
        'biped': biped,
        'old_false_converged': sum(f['false_converged'] for f in old)
        + sum(int(c['old_converged'] and c['old_rel_cost_gap'] > GAP_TOL)
              for c in biped.values()),
        'old_worst_cost_ratio': float(max([f['worst_cost_ratio'] for f in old]
                                          + [1.0 + c['old_rel_cost_gap']
                                             for c in biped.values() if c['old_converged']])),
        'gap_tolerance': GAP_TOL,
        'elapsed_s': time.time() - t0,
    }
    out['passed'] = bool(out['newton_false_converged'] == 0 and n >= 500
                         and out['newton_max_rel_cost_gap'] <= GAP_TOL)
    out_dir = Path(getattr(args, 'out', 'bench'))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / 'solvers.md').write_text(_markdown(out))
    print(f'bench solvers: {out["newton_false_converged"]} false converged, max gap '
          f'{out["newton_max_rel_cost_gap"]:.2e} (old: {out["old_false_converged"]})',
          file=sys.stderr)
    return out


def _markdown(out: dict) -> str:
    lines = ['# legid bench solvers', '',
             'Bound-constrained Newton (Wu & Gao 2021) against the better of SLSQP and OSQP. '
             f'False converged: reports converged with a cost > {GAP_TOL:g} (relative) above '
             'the reference.', '',
             f'- random problems: {out["random_problems"]}',
             f'- `newton_false_converged`: **{out["newton_false_converged"]}**',
             f'- `newton_max_rel_cost_gap`: **{out["newton_max_rel_cost_gap"]:.2e}**',
             f'- not converged (status reported, last iterate kept): '
             f'{out["newton_not_converged"]}',
             f'- before the KKT test (`old`): {out["old_false_converged"]} false converged, '
             f'worst cost {out["old_worst_cost_ratio"]:.3g}x the reference', '',
             '| set | solver | runs | converged | false converged | max rel gap | '
             'worst cost ratio |', '|---|---|---|---|---|---|---|']
    for which in ('new', 'old'):
        for key, f in out['random'][which].items():
            lines.append(f'| {key} | {which} | {f["runs"]} | {f["converged"]} | '
                         f'{f["false_converged"]} | {f["max_rel_cost_gap"]:.2e} | '
                         f'{f["worst_cost_ratio"]:.3g} |')
    if out['biped']:
        lines += ['', '| biped case | status | iterations | rel gap vs SLSQP | old converged '
                  '| old rel gap |', '|---|---|---|---|---|---|']
        for key, c in out['biped'].items():
            lines.append(f'| {key} | {c["status"]} | {c["iterations"]} | '
                         f'{c["rel_cost_gap"]:.2e} | {c["old_converged"]} | '
                         f'{c["old_rel_cost_gap"]:.2e} |')
    return '\n'.join(lines) + '\n'
