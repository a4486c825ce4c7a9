"""``legid bench excitation``: designed whole-body excitations, executed in MuJoCo and identified.

Per robot (Talos with its upper body locked, Solo12, the built-in biped):

1. Design (:mod:`legid_ros.core.excitation.design`) on the CAD model: ``design_s``, the
   predicted share of determined combinations of the grouped per-side set
   (``identifiable_fraction_predicted``) and the standing excitation's, the same way; beside
   them ``identifiable_fraction_static_max``, the most any quasi-static motion could determine
   (:mod:`legid_ros.core.excitation.ceiling`).
2. The designed motion tracked in MuJoCo by the project's simulator
   (:mod:`legid_ros.core.sim.described`) on a true robot outside the fitted model
   (:func:`~legid_ros.core.sim.described.perturbed_truth`), written as a rosbag2 and read back
   (as ``legid bench robots``); each servo's damping at most ``--kv-dt-inertia-max`` times
   its joint's inertia over the 1 ms step (what a 1 kHz digital drive can realise; above it
   MuJoCo's implicit damping makes stance feet creep: Solo12's knees, at 4.2 times with the
   default damping per kg, crept 4.2 mm on the designed motion, 1.3 mm at 0.5).
3. ``legid identify``'s API (``zmp_newton`` on ``--param-set``, the data preparation of
   ``bench robots``, regularisation ``--reg``; with the default held-out choice too, under
   ``default_reg``) and the online path (replay -> buffer -> estimator).
4. Figures: ``identifiable_fraction`` (the estimate's own std within 2 % mass / 3 mm COM,
   :mod:`legid_ros.core.excitation.information`), the errors in those combinations, the
   median per-link mass error over every leg link, and what the physics did: ``fell``,
   ``slip_mm_max`` (stance feet), ``limit_violations`` (recorded joints outside their ranges
   or CAD torques over the URDF's limits), ``self_collisions`` (samples of the *executed*
   motion with a colliding pair, checked every 0.1 s).
"""

from __future__ import annotations

import importlib
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Dict, List

import numpy as np

from legid_ros.core.errors import LegidError

ROBOTS = ('talos', 'solo12', 'biped')
TARGETS = {'identifiable_fraction': 0.6, 'mass_err_pct_max_identifiable': 2.0,
           'com_err_mm_max_identifiable': 3.0, 'link_mass_err_pct_median': 5.0,
           'slip_mm_max': 2.0, 'limit_violations': 0, 'self_collisions': 0}
#: Largest servo damping x physics step over the joint's inertia [-]: a quarter of a discrete
#: drive's stability bound (explicit damping at rate 1 / dt is stable for kv dt < 2 I)
KV_DT_INERTIA_MAX = 0.5


def add_arguments(parser) -> None:
    """Arguments of ``legid bench excitation``."""
    parser.add_argument('--robots', nargs='+', default=list(ROBOTS),
                        help='robots: names under config/robots/, description YAMLs, or biped')
    parser.add_argument('--duration', type=float, default=120.0,
                        help='designed excitation [s] (default 120)')
    parser.add_argument('--budget', type=float, default=None,
                        help='design time budget per robot [s] (default: none, every '
                             'candidate of the search is tried, so the figures do not depend '
                             "on the machine's speed; legid excite's default is 150 s)")
    parser.add_argument('--rate', type=float, default=200.0, help='recording rate [Hz]')
    parser.add_argument('--param-set', default='grouped_sides',
                        choices=['grouped', 'grouped_sides'], help='parameter set')
    parser.add_argument('--reg', type=float, default=1e-9,
                        help='regularisation toward CAD of zmp_newton (default 1e-9: the '
                        "identifiable combinations are judged by the data's own std; a prior "
                        'chosen on held-out data, 1e-7 on the biped, pulls them toward CAD: '
                        'the figures with it are under default_reg)')
    parser.add_argument('--skip-online', action='store_true', help='no online pass')
    parser.add_argument('--skip-fixed-base', action='store_true',
                        help='no fixed-base leg comparison with FIGAROH')
    parser.add_argument('--skip-locomotion', action='store_true',
                        help='no locomotion runs (Solo12 trotting, Talos stepping in place)')
    parser.add_argument('--locomotion-only', action='store_true',
                        help='only the locomotion runs (no designed excitation, no fixed-base '
                        'leg): the trot and the stepping alone')
    parser.add_argument('--locomotion-duration', type=float, default=30.0,
                        help='each locomotion run [s] (default 30)')
    parser.add_argument('--fall-seeds', type=int, default=10,
                        help='truths each gait is also simulated on, to count its falls '
                             '(0: none; default 10)')
    parser.add_argument('--seed', type=int, default=0, help='seed of the truth and the runs')
    parser.add_argument('--kv-dt-inertia-max', type=float, default=KV_DT_INERTIA_MAX,
                        help='servo damping times the 1 ms step at most this many times each '
                        "joint's inertia in the designed runs (default %(default)g; <= 0: the "
                        'damping per kg alone)')


def _progress(msg: str) -> None:
    print(f'legid bench excitation: {msg}', file=sys.stderr, flush=True)


def _load(name: str):
    from legid_ros.bench.robots import description_path
    from legid_ros.core.robot import load_robot
    if name == 'biped':
        return load_robot('biped'), 'biped (built in)'
    desc = description_path(name)
    return load_robot(desc), str(desc)


def identified_figures(robot, param_set: str, res, pi_true) -> dict:
    """``identifiable_fraction`` and the errors of one identified result."""
    from legid_ros.bench.accuracy_errors import identifiable_grouped
    from legid_ros.core.excitation.information import determined
    from legid_ros.core.identification.parameters.grouped import GroupedSet
    grp = GroupedSet(robot, per_side=param_set == 'grouped_sides')
    out: Dict[str, object] = {}
    x, xt = grp.from_standard(res.pi), grp.from_standard(pi_true)
    w = grp.width
    legs = [u for u in range(grp.n_groups) if grp.unit_group[u] != 'trunk']
    mass = [100 * abs(x[w * u] - xt[w * u]) / xt[w * u] for u in legs]
    com = [1e3 * float(np.linalg.norm(x[w * u + 1:w * u + 4] - xt[w * u + 1:w * u + 4]))
           for u in legs]
    out['link_mass_err_pct_median'] = float(np.median(mass))
    out['link_com_err_mm_median'] = float(np.median(com))
    unc = res.uncertainty
    if unc is None or list(unc.names) != grp.names:
        out['identifiable_fraction'] = None
        return out
    ok = determined(unc)
    out['identifiable_fraction'] = float(ok.mean())
    out['determined_combinations'] = int(ok.sum())
    out['combinations'] = int(ok.size)
    if ok.any():
        errs = identifiable_grouped(robot, param_set, [res.pi], [replace(unc, identifiable=ok)],
                                    pi_true)
        out['mass_err_pct_max_identifiable'] = errs['mass_err_pct_max_identifiable']
        out['com_err_mm_max_identifiable'] = errs['com_err_mm_max_identifiable']
        out['identifiable_combinations'] = errs['identifiable_combinations']
    return out


def executed_checks(robot, rec, collision, every_s: float = 0.1) -> dict:
    """Limit violations and self-collisions of the recorded (executed) motion."""
    model = robot.model
    lo, hi = model.lowerPositionLimit[7:], model.upperPositionLimit[7:]
    q = rec.q
    viol = int(((q < lo - 1e-3) | (q > hi + 1e-3)).sum())
    step = max(1, int(round(every_s * rec.meta.get('rate_hz', 200.0))))
    n_coll, pairs = 0, set()
    for k in range(0, rec.n, step):
        full = np.concatenate([rec.base_pose_true[k], q[k]])
        bad = collision.colliding(full)
        n_coll += bool(bad)
        pairs.update(collision.names(b) for b in bad)
    return {'executed_position_violations': viol, 'self_collisions': n_coll,
            'collision_pairs': sorted(pairs)}


def evaluate_robot(name: str, args, tmp: Path) -> dict:
    """Every figure of one robot."""
    from legid_ros.bench.robots import PREP, _bag_roundtrip, _online
    from legid_ros.core.excitation.design import ExcitationProblem, design
    from legid_ros.core.identification.api import identify
    from legid_ros.core.sim.described import DescribedRun, perturbed_truth, simulate_described

    robot, desc = _load(name)
    out: Dict[str, object] = {'description': desc, 'joints': len(robot.actuated_joint_names)}
    problem = ExcitationProblem(robot, args.duration, args.param_set)
    _progress(f'{name}: designing {args.duration:g} s (budget '
              f'{"none" if args.budget is None else f"{args.budget:g} s"})')
    des = design(problem, budget_s=args.budget, progress=lambda m: _progress(f'{name}: {m}'))
    best = des.best
    out['design_s'] = des.design_s
    out['design'] = best.summary()
    out['design_constraints'] = best.constraints.as_dict()
    out['identifiable_fraction_predicted'] = best.prediction.fraction
    out['standing_fraction_predicted'] = (des.baseline.prediction.fraction
                                          if des.baseline else None)
    # beside the figure: the most any quasi-static motion could determine
    out['identifiable_fraction_static_max'] = des.ceiling.fraction
    out['static_ceiling'] = des.ceiling.as_dict()
    out['candidates'] = des.tried
    out['collision_pairs_excluded'] = problem.collision.excluded
    pi_true, info = perturbed_truth(robot, seed=args.seed)
    out['truth'] = info
    t0 = time.perf_counter()
    _progress(f'{name}: MuJoCo {best.plan.duration_s:.0f} s')
    cap = getattr(args, 'kv_dt_inertia_max', KV_DT_INERTIA_MAX)
    settings = DescribedRun(kv_dt_inertia_max=cap if cap and cap > 0 else None)
    out['kv_dt_inertia_max'] = settings.kv_dt_inertia_max
    rec = simulate_described(robot, pi_true, rate_hz=args.rate, seed=args.seed, plan=best.plan,
                             settings=settings)
    out['simulation_s'] = time.perf_counter() - t0
    out['fell'] = bool(rec.meta['fell'])
    out['slip_mm_max'] = 1e3 * float(rec.meta['stance_slip_max_m'])
    out['physics'] = {k: v for k, v in rec.meta.items() if isinstance(v, (int, float, str))}
    from legid_ros.core.excitation.collision import SelfCollision
    from legid_ros.core.excitation.design import known_motion
    # executed: contact only (the design's distance margin is the plan's, not a collision), on
    # the pairs the design checks (the same known motion)
    exe = executed_checks(robot, rec, SelfCollision.build(
        robot, known_motion(robot, args.duration)))
    out.update(exe)
    out['limit_violations'] = int(exe['executed_position_violations']
                                  + best.constraints.limit_violations)
    if out['fell']:
        out['error'] = 'the robot fell'
        return out
    rec = _bag_roundtrip(rec, robot, tmp, f'{name}_excitation')
    _progress(f'{name}: zmp_newton on {args.param_set}')
    t1 = time.perf_counter()
    try:
        res = identify(rec, robot, 'zmp_newton', param_set=args.param_set, reg=args.reg,
                       **PREP)
    except LegidError as exc:
        out['error'] = f'{type(exc).__name__}: {exc}'
        return out
    out['identify_s'] = time.perf_counter() - t1
    out['reg'] = args.reg
    out.update(identified_figures(robot, args.param_set, res, pi_true))
    try:
        res_d = identify(rec, robot, 'zmp_newton', param_set=args.param_set, **PREP)
        out['default_reg'] = {'reg': res_d.info.get('reg_chosen'), **{
            k: v for k, v in identified_figures(robot, args.param_set, res_d, pi_true).items()
            if k != 'identifiable_combinations'}}
    except LegidError as exc:
        out['default_reg'] = {'error': f'{type(exc).__name__}: {exc}'}
    if not args.skip_online:
        _progress(f'{name}: replay -> buffer -> estimator')
        online, res_on = _online(rec, robot, args.param_set)
        if res_on is not None:
            online.update({f'online_{k}': v for k, v in identified_figures(
                robot, args.param_set, res_on, pi_true).items()
                if k in ('link_mass_err_pct_median', 'link_com_err_mm_median')})
        out['online'] = online
    return out


def fixed_base_leg(seed: int = 0, figaroh_iterations: int = 200) -> dict:
    """The fixed-base leg (``leg3``): our Fourier + quintic design beside FIGAROH's optimal
    excitation design (:mod:`legid_ros.bench.excitation_figaroh`, needs ``cyipopt``), both
    scored on the same samples by our scaled base regressor (condition number, log-det), with
    both design times; when FIGAROH's design cannot run, its reason instead of a ratio."""
    from legid_ros.bench import excitation_figaroh
    from legid_ros.core.identification.fixed_base import leg_context
    from legid_ros.core.robot import load_robot
    from legid_ros.core.synthetic.leg_experiment import design_excitation
    robot = load_robot('leg3', floating_base=False)
    ctx = leg_context(robot)
    t0 = time.perf_counter()
    des = design_excitation(ctx, seed=seed)
    ours_s = time.perf_counter() - t0
    try:
        importlib.import_module('cyipopt')  # FIGAROH's optimal-trajectory module imports it
    except ImportError as exc:
        fig = excitation_figaroh.FigarohDesign(
            'failed', f'FIGAROH\'s excitation design (figaroh.tools.robotipopt) imports cyipopt, '
            f'which is not importable here ({exc})')
    else:
        fig = excitation_figaroh.design(robot, seed=seed, max_iterations=figaroh_iterations)
    out = excitation_figaroh.side_by_side(ctx, des.excitation, ours_s, fig)
    out['settings'] = excitation_figaroh.settings(robot, figaroh_iterations)
    return out


def _passed(res: dict) -> bool:
    ok = True
    for entry in res['robots'].values():
        ok &= entry.get('fell') is False
        for key, target in TARGETS.items():
            v = entry.get(key)
            if key == 'identifiable_fraction':
                ok &= v is not None and v >= target
            else:
                ok &= v is not None and v <= target
    return bool(ok)


def run(args) -> Dict[str, object]:
    """Run the benchmark; returns the JSON dict."""
    from legid_ros.bench.excitation_locomotion import NOT_RUN, locomotion_block
    from legid_ros.bench.excitation_report import write_report
    results: Dict[str, object] = {'robots': {}, 'targets': TARGETS, 'param_set': args.param_set,
                                  'duration_s': args.duration, 'budget_s': args.budget}
    with tempfile.TemporaryDirectory(prefix='legid_bench_excitation_') as tmpdir:
        for name in ([] if getattr(args, 'locomotion_only', False) else args.robots):
            results['robots'][Path(name).stem] = evaluate_robot(name, args, Path(tmpdir))
        if args.skip_locomotion:
            results['locomotion'] = dict(NOT_RUN)
        else:
            results['locomotion'] = locomotion_block(args, Path(tmpdir))
    if not (args.skip_fixed_base or getattr(args, 'locomotion_only', False)):
        _progress('fixed-base leg: our design; FIGAROH\'s')
        results['fixed_base_leg'] = fixed_base_leg(args.seed)
    results['passed'] = _passed(results)
    write_report(results, Path(args.out))
    return results


__all__: List[str] = ['run', 'add_arguments', 'evaluate_robot', 'identified_figures']
