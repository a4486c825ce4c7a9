"""``legid bench honesty``: are the reported standard deviations ones a user can trust?

Three robots in MuJoCo, each seed its own true robot outside every fitted model: the built-in
biped (:func:`legid_ros.core.sim.mujoco_biped.simulate_biped_mujoco`, the out-of-model truth
of ``bench identify``), Talos with its upper body locked and Solo12 (a point-foot quadruped),
both with :func:`legid_ros.core.sim.described.perturbed_truth` as ``bench robots`` does. Each
seed's run is simulated once (cached as .npz under ``--cache``) and identified with every
parameter set of ``--sets`` (the Newton sets by ``zmp_newton``; ``standard`` by ``zmp_qp``).
Scores of each result's physical summary (:mod:`legid_ros.core.identification.summary`):

- ``z_max``: the largest |error| / reported std over the quantities the summary calls
  determined, every robot, set and seed;
- ``std_coverage_ratio``: per robot and set, as ``bench identify``'s: the mean reported std of
  each determined quantity over the seeds divided by the spread of its estimates, geometric
  mean over the quantities. Each seed has its own truth here, so the spread is that of the
  errors (RMS of estimate - truth), which counts the prior's and the held parameters' share;
- ``tight_std_on_undetermined``: directions whose data-only std exceeds the prior width (the
  uncertainty's combinations, and the summary's quantities not determined) reported tighter
  than that width;
- ``negative_mass_urdfs_written``: URDFs with a mass <= 0 that ``legid identify`` wrote
  (``--method torque_ls --param-set base`` on a biped bag, the classic baseline);
- ``prerequisite_failures_after_bag_read``: prerequisite failures (``--method primitives`` on a
  robot without primitives) that read the bag before failing.

Diagnostics beside them: per robot and set the mean and RMS error of each determined quantity
(a mean near the RMS is a bias no noise explains), ``coverage_if_calibrated_5_95`` (the range
of the coverage ratio that stds exactly right would give with these seeds and these stds:
:func:`calibrated_range`), ``z_rms`` (RMS of error / std over every determined quantity and
seed: 1 for a calibrated std, seed by seed) and ``n_blocks_per_seed`` (the blocks behind each
seed's score covariance: 2-3 blocks leave it 1-2 degrees of freedom), and per robot
``zmp_offset_mm``: the mean of
the measured ZMP less the ZMP of the true parameters over each seed's samples (a measurement
bias that a constant COM shift absorbs, so no residual and no std shows it). Under ``beside``,
in no figure: other methods scored the same way (``--beside``, default ``floating_qp`` on
the per-side grouped set: the floating-base rows, whose effort rows carry model error their
std does not count; its failures are listed apart and do not fail the run).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

import numpy as np

from legid_ros.core.atomic_files import write_text

ROBOTS = ('biped', 'talos', 'solo12')
SETS = ('reduced', 'grouped', 'grouped_sides', 'standard', 'auto')
#: Beside the figures (not in them): the floating-base rows (joint efforts and foot wrenches)
#: on the per-side grouped set, whose std does not count the effort rows' model error
BESIDE = ('floating_qp:grouped_sides',)
TARGETS = {'z_max': 3.0, 'std_coverage_ratio': [0.67, 1.5], 'tight_std_on_undetermined': 0,
           'negative_mass_urdfs_written': 0, 'prerequisite_failures_after_bag_read': 0}


def add_arguments(parser) -> None:
    """Arguments of ``legid bench honesty``."""
    parser.add_argument('--robots', nargs='+', default=list(ROBOTS))
    parser.add_argument('--sets', default=','.join(SETS),
                        help='parameter sets, comma separated')
    parser.add_argument('--seeds', type=int, default=8, help='seeds (truths and runs) per robot')
    parser.add_argument('--duration', type=float, default=45.0,
                        help='run [s] of the described robots (Solo12 needs >= 42)')
    parser.add_argument('--biped-duration', type=float, default=30.0, help='biped run [s]')
    parser.add_argument('--beside', default=','.join(BESIDE),
                        help='method:set pairs scored beside the figures, not in them '
                             '(comma separated; empty: none)')
    parser.add_argument('--cache', default='/tmp/legid_bench_honesty',
                        help='directory of the simulated runs (.npz), reused across sets')


def _log(msg: str) -> None:
    print(f'legid bench honesty: {msg}', file=sys.stderr, flush=True)


def _run(name: str, seed: int, args):
    """(robot, recording, pi_true, prepare options) of one robot and seed (cached)."""
    from legid_ros.core.recording import Recording
    from legid_ros.core.robot import load_robot
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    if name == 'biped':
        from legid_ros.bench.accuracy_runs import simulate_runs
        robot = load_robot('biped')
        recs, _ = simulate_runs(robot, [seed], args.biped_duration, 200.0, cache=str(cache),
                                truth_class='out_of_model')
        return robot, recs[0], recs[0].pi_true, {'step': 2}
    from legid_ros.bench.robots import PREP, description_path
    from legid_ros.core.sim.described import perturbed_truth, simulate_described
    robot = load_robot(description_path(name))
    pi_true, _ = perturbed_truth(robot, seed=seed)
    path = cache / f'{name}_seed{seed}_{args.duration:g}s.npz'
    if path.is_file():
        rec = Recording.load_npz(path)
    else:
        rec = simulate_described(robot, pi_true, duration_s=args.duration, rate_hz=200.0,
                                 seed=seed)
        rec.save_npz(path)
    if rec.meta.get('fell'):
        raise RuntimeError(f'{name} seed {seed}: the robot fell')
    return robot, rec, pi_true, dict(PREP)


def _identify(robot, rec, param_set: str, prep: dict):
    """The result of one parameter set (or of a ``method:set`` pair)."""
    from legid_ros.core.identification.api import identify
    if ':' in param_set:
        method, pset = param_set.split(':', 1)
        return identify(rec, robot, method, param_set=pset, **prep)
    if param_set == 'standard':
        return identify(rec, robot, 'zmp_qp', check=False, **prep)
    return identify(rec, robot, 'zmp_newton', param_set=param_set, check=False, **prep)


def _zmp_offset(robot, rec, pi_true, prep: dict) -> List[float]:
    """Mean of the measured ZMP less the ZMP of the true parameters over the run's samples
    (x, y) [mm]."""
    from legid_ros.core.identification.api import prepare, regressors_for, split_options
    from legid_ros.core.identification.rows.zmp import zmp_derivatives
    samples = prepare(rec, robot, split_options(prep)[0])
    model, _ = zmp_derivatives(regressors_for(samples, robot, []).wrench, pi_true,
                               hessian=False)
    return [float(v) for v in 1e3 * np.mean(samples.zmp - model, axis=0)]


def _score(robot, res, pi_true) -> dict:
    """Per determined quantity: value, truth, std; and the tight-std count."""
    from legid_ros.core.identification.summary import values
    ph, unc = res.physical, res.uncertainty
    truth = values(robot, pi_true, ph.posture if ph.posture.size else None)
    det = {q.name: {'err': q.value - truth[q.name], 'std': q.std, 'unit': q.unit}
           for q in ph.quantities if q.determined}
    tight = 0
    width = unc.prior_width
    for v, s in zip(unc.vectors, unc.combination_std):
        if s > width and unc.std_along(v) < width * (1 - 1e-6):
            tight += 1
    tight += sum(1 for q in ph.quantities if not q.determined and q.std_data > q.prior_width
                 and q.std < q.prior_width * (1 - 1e-6))
    return {'determined': det, 'tight': tight, 'n_blocks': int(unc.n_blocks),
            'n_determined': len(det), 'n_quantities': len(ph.quantities)}


def calibrated_range(stds: Dict[str, List[float]], draws: int = 2000,
                     seed: int = 0) -> List[float]:
    """5 % and 95 % quantiles of the coverage ratio a calibrated std would give [-].

    Errors drawn as ``N(0, std)`` per seed and quantity (the stds reported): the ratio's
    scatter with this many seeds, and its bias when the stds differ between seeds (the mean
    std over the RMS of errors drawn with them is below 1 then). A ratio outside this range
    is the std's, not the seeds' chance.

    Args:
        stds: Per determined quantity (at least 3 seeds), the reported std of each seed.
        draws: Monte Carlo draws.
        seed: Random seed.
    """
    if not stds:
        return [float('nan'), float('nan')]
    rng = np.random.default_rng(seed)
    logs = np.zeros(draws)
    for s in stds.values():
        s = np.asarray(s, float)
        err = rng.normal(size=(draws, s.size)) * s[None, :]
        rms = np.sqrt(np.mean(err ** 2, axis=1))
        logs += np.log(s.mean() / np.maximum(rms, 1e-300))
    ratio = np.exp(logs / len(stds))
    return [float(np.quantile(ratio, 0.05)), float(np.quantile(ratio, 0.95))]


def _per_set(scores: List[dict]) -> dict:
    """z over the seeds and the coverage ratio of one robot and set."""
    z, names = [], {}
    for s in scores:
        for name, d in s['determined'].items():
            zz = abs(d['err']) / d['std'] if d['std'] > 0 else float('inf')
            z.append(zz)
            names.setdefault(name, []).append(d)
    ratios, means, rmss = {}, {}, {}
    for name, ds in names.items():
        if len(ds) < 3:
            continue
        rms = float(np.sqrt(np.mean([d['err'] ** 2 for d in ds])))
        ratios[name] = float(np.mean([d['std'] for d in ds]) / max(rms, 1e-300))
        means[name] = float(np.mean([d['err'] for d in ds]))
        rmss[name] = rms
    cov = float(np.exp(np.mean(np.log(list(ratios.values()))))) if ratios else None
    stds = {name: [d['std'] for d in names[name]] for name in ratios}
    finite = [v for v in z if np.isfinite(v)]
    worst = max(((abs(d['err']) / d['std'], n) for s in scores
                 for n, d in s['determined'].items() if d['std'] > 0), default=(0.0, None))
    return {'z_max': float(max(z)) if z else None, 'z_max_quantity': worst[1],
            'std_coverage_ratio': cov, 'coverage_per_quantity': ratios,
            'coverage_if_calibrated_5_95': calibrated_range(stds),
            'z_rms': float(np.sqrt(np.mean(np.square(finite)))) if finite else None,
            'n_blocks_per_seed': [s.get('n_blocks') for s in scores],
            'error_mean_per_quantity': means, 'error_rms_per_quantity': rmss,
            'tight_std_on_undetermined': int(sum(s['tight'] for s in scores)),
            'determined_per_seed': [s['n_determined'] for s in scores], 'seeds': len(scores)}


def _urdf_masses(path: Path) -> List[float]:
    """Every ``<mass value=...>`` of a URDF [kg]."""
    import xml.etree.ElementTree as ET
    return [float(m.get('value')) for m in ET.parse(path).getroot().iter('mass')]


def _cli_checks(tmp: Path) -> dict:
    """``negative_mass_urdfs_written`` and ``prerequisite_failures_after_bag_read`` through the
    command itself."""
    import argparse
    import contextlib
    import io
    from legid_ros.bag.recording_io import write_bag
    from legid_ros.commands import identify as cmd
    from legid_ros.core.robot import load_robot
    from legid_ros.core.synthetic import SyntheticConfig, simulate_biped

    robot = load_robot('biped')
    rec = simulate_biped(SyntheticConfig(duration_s=20.0, rate_hz=100.0, seed=3))
    bag = tmp / 'biped_bag'
    write_bag(rec, bag, robot=robot)
    out = {'negative_mass_urdfs_written': 0, 'prerequisite_failures_after_bag_read': 0,
           'cases': {}}
    from legid_ros.core.identification.validation import HeldOutValidation
    reads = []
    real = HeldOutValidation.start_load

    def counting(self, *a, **k):  # the bag is read by the worker this starts
        reads.append(1)
        return real(self, *a, **k)

    HeldOutValidation.start_load = counting
    try:
        for label, argv in (('torque_ls_base', ['--method', 'torque_ls', '--param-set', 'base']),
                            ('primitives_without', ['--method', 'primitives', '--robot',
                                                    'solo12'])):
            parser = argparse.ArgumentParser()
            cmd.add_arguments(parser)
            dest = tmp / label
            args = parser.parse_args(['--bag', str(bag), '--out', str(dest), '--quiet'] + argv)
            n0 = len(reads)
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    status = cmd.run(args)
            except SystemExit as exc:
                status = exc.code
            except Exception as exc:  # the CLI's main turns LegidError into exit 2
                status = f'{type(exc).__name__}: {exc}'[:300]
            read = len(reads) > n0
            urdfs = list(dest.glob('*_identified.urdf')) if dest.is_dir() else []
            neg = sum(1 for u in urdfs if min(_urdf_masses(u)) <= 0)
            out['negative_mass_urdfs_written'] += neg
            if label == 'primitives_without' and read:
                out['prerequisite_failures_after_bag_read'] += 1
            out['cases'][label] = {'status': status, 'bag_read': read,
                                   'urdfs_written': len(urdfs), 'negative_mass_urdfs': neg}
    finally:
        HeldOutValidation.start_load = real
    return out


def run(args) -> Dict[str, object]:
    """Run the benchmark; returns the JSON dict (also ``<out>/honesty.md``)."""
    from legid_ros.core.identification.threads import limit_blas_threads
    limit_blas_threads(1)
    t0 = time.perf_counter()
    sets = [s for s in args.sets.split(',') if s]
    beside = [s for s in (getattr(args, 'beside', '') or '').split(',') if s]
    per: Dict[str, Dict[str, dict]] = {}
    per_beside: Dict[str, Dict[str, dict]] = {}
    errors: List[str] = []
    beside_errors: List[str] = []
    offsets: Dict[str, List[List[float]]] = {}
    for name in args.robots:
        scores: Dict[str, List[dict]] = {s: [] for s in sets + beside}
        offsets[name] = []
        for seed in range(args.seeds):
            try:
                robot, rec, pi_true, prep = _run(name, seed, args)
                offsets[name].append(_zmp_offset(robot, rec, pi_true, prep))
            except Exception as exc:  # a run that failed is reported, not hidden
                errors.append(f'{name} seed {seed}: {type(exc).__name__}: {exc}')
                _log(errors[-1])
                continue
            for pset in sets + beside:
                try:
                    res = _identify(robot, rec, pset, prep)
                    if res.physical is None:
                        raise RuntimeError(res.info.get('uncertainty_error')
                                           or res.info.get('summary_error') or 'no summary')
                    scores[pset].append(_score(robot, res, pi_true))
                except Exception as exc:
                    msg = f'{name} seed {seed} {pset}: {type(exc).__name__}: {exc}'
                    (beside_errors if pset in beside else errors).append(msg)
                    _log(msg)
            _log(f'{name} seed {seed} done ({time.perf_counter() - t0:.0f} s)')
        per[name] = {s: _per_set(scores[s]) for s in sets if scores[s]}
        per_beside[name] = {s: _per_set(scores[s]) for s in beside if scores[s]}
    with tempfile.TemporaryDirectory(prefix='legid_bench_honesty_') as tmp:
        cli = _cli_checks(Path(tmp))
    zs = [d['z_max'] for r in per.values() for d in r.values() if d['z_max'] is not None]
    covs = {f'{r}/{s}': d['std_coverage_ratio'] for r, v in per.items() for s, d in v.items()}
    results = {
        'z_max': float(max(zs)) if zs else None,
        'std_coverage_ratio': covs,
        'tight_std_on_undetermined': int(sum(d['tight_std_on_undetermined']
                                             for r in per.values() for d in r.values())),
        'negative_mass_urdfs_written': cli['negative_mass_urdfs_written'],
        'prerequisite_failures_after_bag_read': cli['prerequisite_failures_after_bag_read'],
        'per_robot': per, 'cli_cases': cli['cases'], 'errors': errors, 'sets': sets,
        'beside': {'what': 'scored as the sets are, not in any figure', 'pairs': beside,
                   'per_robot': per_beside, 'errors': beside_errors},
        'zmp_offset_mm': {r: {'mean': np.mean(v, axis=0).tolist() if v else None,
                              'per_seed': v} for r, v in offsets.items()},
        'robots': list(args.robots), 'seeds': args.seeds, 'duration_s': args.duration,
        'biped_duration_s': args.biped_duration, 'targets': TARGETS,
        'elapsed_s': time.perf_counter() - t0}
    ok_cov = all(c is not None and 0.67 <= c <= 1.5 for c in covs.values())
    results['passed'] = bool(results['z_max'] is not None and results['z_max'] <= 3.0 and ok_cov
                             and results['tight_std_on_undetermined'] == 0
                             and cli['negative_mass_urdfs_written'] == 0
                             and cli['prerequisite_failures_after_bag_read'] == 0
                             and not errors)
    _write_md(results, Path(args.out) / 'honesty.md')
    return results


def _write_md(res: dict, path: Path) -> None:
    lines = ['# legid bench honesty', '',
             f"z_max {res['z_max']}, tight_std_on_undetermined "
             f"{res['tight_std_on_undetermined']}, negative_mass_urdfs_written "
             f"{res['negative_mass_urdfs_written']}, prerequisite_failures_after_bag_read "
             f"{res['prerequisite_failures_after_bag_read']}, passed {res['passed']}", '',
             '| robot | set | z_max | worst quantity | std_coverage_ratio | calibrated 5-95 % | '
             'z_rms | determined per seed | blocks per seed |',
             '|---|---|---|---|---|---|---|---|---|']
    for r, v in res['per_robot'].items():
        for s, d in v.items():
            cov = d['std_coverage_ratio']
            z = '-' if d['z_max'] is None else round(d['z_max'], 2)
            lo, hi = d.get('coverage_if_calibrated_5_95') or (float('nan'),) * 2
            zr = d.get('z_rms')
            lines.append(f"| {r} | {s} | {z} | {d['z_max_quantity']} | "
                         f"{'-' if cov is None else round(cov, 2)} | {lo:.2f}-{hi:.2f} | "
                         f"{'-' if zr is None else round(zr, 2)} | "
                         f"{d['determined_per_seed']} | {d.get('n_blocks_per_seed')} |")
    for r, v in res.get('beside', {}).get('per_robot', {}).items():
        for s, d in v.items():
            cov, zr = d['std_coverage_ratio'], d.get('z_rms')
            z = '-' if d['z_max'] is None else round(d['z_max'], 2)
            lines.append(f"| {r} | {s} (beside) | {z} | {d['z_max_quantity']} | "
                         f"{'-' if cov is None else round(cov, 2)} | - | "
                         f"{'-' if zr is None else round(zr, 2)} | "
                         f"{d['determined_per_seed']} | {d.get('n_blocks_per_seed')} |")
    offs = [f"{r} {'/'.join(f'{v:+.3f}' for v in d['mean'])}"
            for r, d in res.get('zmp_offset_mm', {}).items() if d['mean'] is not None]
    lines += ['', 'measured ZMP less the ZMP of the true parameters, mean over the seeds (x/y) '
              '[mm]: ' + (', '.join(offs) or '-')]
    lines += ['', 'errors: ' + ('; '.join(res['errors']) or 'none')]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, '\n'.join(lines) + '\n')


__all__ = ['add_arguments', 'run']
