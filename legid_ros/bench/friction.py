"""``legid bench friction``: friction, two-step and robust identification on ``leg3``.

The methods of Xiao, Qian & Luo 2025 (piecewise friction, two-step) and of Zhu & Zhang
(exponential friction, three loops, F-test) on the synthetic geared leg ``leg3``.

Tables: friction-fit MSE per model and joint on the sweep data; held-out relative RMS torque
error of unified Coulomb-viscous, unified Stribeck and two-step piecewise; robust three-loop
vs plain LS with 0/1/2/5 % outlier samples; parameters removed by the F-test; condition number
of the optimised excitation vs random coefficients under the same limits. The tables are also
written to ``<out>/friction.md``; the two-step result to ``<out>/friction_leg3_two_step.yaml``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from legid_ros.core.friction.fitting import MODEL_ORDER
from legid_ros.core.synthetic.leg import make_truth, preprocess
from legid_ros.core.synthetic.leg_experiment import (design_excitation, excitation_run, fit_sweeps,
                                                 ident_settings, leg_cond_function,
                                                 random_leg_excitation, sweep_joint)
from legid_ros.core.identification.identifiability import f_test_reduction
from legid_ros.core.identification.fixed_base import (identify_two_step, leg_context, relative_rms,
                                               rigid_error, unified_cv, unified_stribeck)
from legid_ros.core.identification.solvers.robust import RobustSettings, robust_identify
from legid_ros.core.robot import load_robot

OUTLIER_FRACTIONS = (0.0, 0.01, 0.02, 0.05)


def add_arguments(parser) -> None:
    """Options of the benchmark."""
    parser.add_argument('--seed', type=int, default=0, help='random seed')
    parser.add_argument('--sweep-reps', type=int, default=10,
                        help='repetitions of each sweep stroke (Xiao et al. 2025: 60)')
    parser.add_argument('--outlier-torque', type=float, default=10.0,
                        help='outlier spike scale [N.m]: spikes are 1-2 times this')
    parser.add_argument('--outlier-seeds', type=int, default=2,
                        help='noise realisations averaged in the outlier table')
    parser.add_argument('--random-draws', type=int, default=10,
                        help='random coefficient sets for the condition-number comparison')
    parser.add_argument('--quick', action='store_true', help='short data (smoke run)')


def _table(header, rows) -> str:
    out = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    out += ['| ' + ' | '.join(str(c) for c in r) + ' |' for r in rows]
    return '\n'.join(out)


def run(args) -> dict:
    """Run the benchmark; returns the results dict (``passed`` says if the figures hold)."""
    t_start = time.time()
    quick = bool(getattr(args, 'quick', False))
    seed = int(args.seed)
    robot = load_robot('leg3', floating_base=False)
    truth = make_truth(robot)
    ctx = leg_context(robot)
    names = list(ctx.drive.joint_names)
    cutoff = float(ident_settings(robot).get('filter_cutoff_hz', 7.5))
    bar = tqdm(total=7, desc='bench friction', file=sys.stderr, disable=not sys.stderr.isatty())

    # 1. sweeps and friction fits
    reps = 3 if quick else int(args.sweep_reps)
    sweeps = [sweep_joint(robot, truth, j, reps=reps, seed=seed + 10 * j)
              for j in range(len(names))]
    fits, mse, truth_rms = {}, {}, {}
    dense = np.linspace(0.01, 5.0, 500)
    for kind in MODEL_ORDER:
        fr, ff = fit_sweeps(sweeps, names, kind, seed=seed)
        fits[kind] = fr
        mse[kind] = [float(f.mse) for f in ff]
        truth_rms[kind] = [float(np.sqrt(np.mean((m(dense) - tf.velocity_part(dense)) ** 2)))
                           for m, tf in zip(fr.models, truth.friction)]
    bar.update()

    # 2. excitation: optimised vs random under the same limits
    period = float(ident_settings(robot).get('excitation_period_s', 5.0))
    design = design_excitation(ctx, seed=seed, starts=1 if quick else 2,
                               maxiter=300)
    cond_of = leg_cond_function(ctx, period)
    cond_opt = cond_of(design.excitation)
    cond_rand = [cond_of(random_leg_excitation(ctx, seed=1000 + k))
                 for k in range(3 if quick else int(args.random_draws))]
    cond_ratio = float(np.median(cond_rand) / cond_opt)
    bar.update()

    # 3. training run and held-out runs (different, random trajectories)
    train = excitation_run(robot, truth, design.excitation, cycles=2, reps=5, seed=seed + 100)
    q, qd, qdd, tau = preprocess(train, cutoff_hz=cutoff, decimate=5)
    held = [preprocess(excitation_run(robot, truth, random_leg_excitation(ctx, 2000 + k),
                                      cycles=1, reps=5, seed=seed + 200 + 10 * k),
                       cutoff_hz=cutoff, decimate=5) for k in range(2)]
    qv, qdv, qddv, tauv = (np.vstack([h[i] for h in held]) for i in range(4))
    bar.update()

    # 4. two-step vs unified
    results = {'unified_cv': unified_cv(ctx, q, qd, qdd, tau),
               'unified_stribeck': unified_stribeck(ctx, q, qd, qdd, tau)}
    for kind in ('piecewise', 'stribeck', 'coulomb_viscous'):
        results[f'two_step_{kind}'] = identify_two_step(ctx, q, qd, qdd, tau, fits[kind])
    heldout = {k: (100 * relative_rms(tauv, r.torque(robot, qv, qdv, qddv))).tolist()
               for k, r in results.items()}
    two = np.array(heldout['two_step_piecewise'])
    cut_cv = 100 * (1 - two / np.array(heldout['unified_cv']))
    cut_st = 100 * (1 - two / np.array(heldout['unified_stribeck']))
    Path(args.out).mkdir(parents=True, exist_ok=True)
    results['two_step_piecewise'].save(Path(args.out) / 'friction_leg3_two_step.yaml')
    bar.update()

    # 5. robust vs plain LS with outliers (single runs, unfiltered torques)
    beta_true = ctx.base.B @ truth.theta
    ref = preprocess(excitation_run(robot, truth, random_leg_excitation(ctx, 3000), cycles=1,
                                    reps=1, seed=seed + 300, current_noise=0.0,
                                    position_noise=0.0), cutoff_hz=cutoff, decimate=5)
    n_seeds = 1 if quick else int(args.outlier_seeds)
    out_rows = {}
    clean_state = None
    robust_consistent = True
    for frac in OUTLIER_FRACTIONS:
        errs_r, errs_l, rejected = [], [], []
        for s in range(n_seeds):
            d = excitation_run(robot, truth, design.excitation, cycles=1 if quick else 2,
                               reps=1, seed=seed + 400 + 7 * s, outlier_fraction=frac,
                               outlier_torque=float(args.outlier_torque))
            qo, qdo, qddo, tauo = preprocess(d, cutoff_hz=cutoff, decimate=5)
            rob, state = robust_identify(ctx, qo, qdo, qddo, tauo)
            pls, _ = robust_identify(ctx, qo, qdo, qddo, tauo,
                                     RobustSettings(whiten=False, talwar=False))
            robust_consistent &= rob.consistent and pls.consistent
            if frac == 0.0 and s == 0:
                clean_state = state
            errs_r.append(rigid_error(ctx, rob.beta, beta_true, *ref[:3]))
            errs_l.append(rigid_error(ctx, pls.beta, beta_true, *ref[:3]))
            rejected.append(rob.meta['rejected_samples'] / rob.meta['samples'])
        out_rows[frac] = (float(np.mean(errs_r)), float(np.mean(errs_l)),
                          float(np.mean(rejected)))
    bar.update()
    r_ratio = out_rows[0.02][0] / out_rows[0.0][0]
    l_ratio = out_rows[0.02][1] / out_rows[0.0][1]

    # 6. F-test on the clean robust fit
    ft = f_test_reduction(clean_state.a, clean_state.y, clean_state.names)
    bar.update()

    consistent = bool(all(r.consistent for r in results.values()) and robust_consistent)
    bar.update()
    bar.close()

    checks = {'cut_vs_cv_ge_40pct': bool(np.all(cut_cv >= 40.0)),
              'heldout_le_3pct': bool(np.all(two <= 3.0)),
              'robust_ratio_le_1_5': bool(r_ratio <= 1.5),
              'ls_ratio_ge_3': bool(l_ratio >= 3.0),
              'cond_ratio_ge_10': bool(cond_ratio >= 10.0),
              'consistent': consistent}
    out = {
        'joints': names,
        'friction_fit_mse': mse,
        'friction_truth_rms_nm': truth_rms,
        'heldout_rel_rms_pct_by_method': heldout,
        'heldout_rel_rms_pct': two.tolist(),
        'torque_err_cut_vs_cv_pct': cut_cv.tolist(),
        'torque_err_cut_vs_stribeck_pct': cut_st.tolist(),
        'outliers': {f'{100 * k:g}pct': {'robust_err': v[0], 'ls_err': v[1],
                                          'rejected_fraction': v[2]}
                     for k, v in out_rows.items()},
        'robust_err_ratio_2pct': float(r_ratio),
        'ls_err_ratio_2pct': float(l_ratio),
        'ftest_removed': ft.removed,
        'ftest_f_stat': ft.f_stat, 'ftest_f_crit': ft.f_crit, 'ftest_eps0_pct': ft.eps0,
        'ftest_params_before_after': [len(ft.names), len(ft.kept)],
        'ks_pvalue': ft.ks_pvalue,
        'rel_std_pct': {n: float(e) for n, e in zip(ft.names, ft.rel_std_pct)},
        'cond_optimised': cond_opt, 'cond_random_median': float(np.median(cond_rand)),
        'cond_random_over_optimised': cond_ratio,
        'consistent': consistent,
        'checks': checks,
        'passed': bool(all(checks.values())),
        'quick': quick,
        'seconds': round(time.time() - t_start, 1),
    }
    md = markdown(out)
    Path(args.out, 'friction.md').write_text(md + '\n')
    if not getattr(args, 'json', False):
        print(md)
    return out


def markdown(r: dict) -> str:
    """The benchmark's tables as Markdown."""
    names = r['joints']
    lines = ['# legid bench friction (leg3, synthetic; Xiao et al. 2025, Zhu & Zhang)', '',
             '## Friction fit MSE on the sweep data [N.m^2]', '',
             _table(['model'] + names,
                    [[k] + [f'{x:.2e}' for x in v] for k, v in r['friction_fit_mse'].items()]),
             '', '## RMS distance to the true friction law over 0.01-5 rad/s [N.m]', '',
             _table(['model'] + names,
                    [[k] + [f'{x:.4f}' for x in v]
                     for k, v in r['friction_truth_rms_nm'].items()]),
             '', '## Held-out relative RMS torque error [%]', '',
             _table(['method'] + names,
                    [[k] + [f'{x:.2f}' for x in v]
                     for k, v in r['heldout_rel_rms_pct_by_method'].items()]),
             '', 'Two-step piecewise cuts the error vs unified Coulomb-viscous by '
             + ', '.join(f'{x:.1f}' for x in r['torque_err_cut_vs_cv_pct'])
             + ' % and vs unified Stribeck by '
             + ', '.join(f'{x:.1f}' for x in r['torque_err_cut_vs_stribeck_pct']) + ' %.',
             '', '## Robust three-loop vs plain LS with outlier samples', '',
             _table(['outliers', 'robust rigid error', 'plain LS rigid error',
                     'robust rejected'],
                    [[k, f"{v['robust_err']:.4f}", f"{v['ls_err']:.4f}",
                      f"{100 * v['rejected_fraction']:.1f} %"]
                     for k, v in r['outliers'].items()]),
             '', f"At 2 % outliers: robust error x{r['robust_err_ratio_2pct']:.2f} of its clean "
             f"value, plain LS x{r['ls_err_ratio_2pct']:.2f}.", '',
             '## F-test parameter reduction', '',
             f"KS test of the residuals: p = {r['ks_pvalue']:.3g}. At eps_0 = "
             f"{r['ftest_eps0_pct']} %, F = {r['ftest_f_stat']:.3f} <= F_0.95 = "
             f"{r['ftest_f_crit']:.3f}; parameters {r['ftest_params_before_after'][0]} -> "
             f"{r['ftest_params_before_after'][1]}; removed:", '']
    lines += [f'- `{n}`' for n in r['ftest_removed']] or ['- (none)']
    lines += ['', 'Relative standard deviation of every parameter of the robust fit:', '',
              _table(['parameter', 'eps [%]'],
                     [[f'`{n}`', f'{e:.1f}'] for n, e in r['rel_std_pct'].items()])]
    lines += ['', '## Excitation condition number', '',
              _table(['optimised', 'random (median)', 'ratio'],
                     [[f"{r['cond_optimised']:.1f}", f"{r['cond_random_median']:.1f}",
                       f"{r['cond_random_over_optimised']:.1f}"]]),
              '', f"All SDP results physically consistent: {r['consistent']}. "
              f"Checks: {r['checks']}. Passed: {r['passed']}. ({r['seconds']} s)"]
    return '\n'.join(lines)
