"""``legid bench conventions``: recordings of setups we did not write, described and checked.

Per robot (Solo12, point feet; Talos, flat feet with sole sensors and its upper body
locked), one MuJoCo run (out-of-model truth) read out at 1 kHz is recorded as other setups
record it (:mod:`legid_ros.bench.conventions_variants`, made at the simulator's readout by
:mod:`legid_ros.core.sim.conventions`): the IMU on another topic, mounted 90 deg about z with
a heading offset and drift, or mounted rotated with a yawed reference and world-axes forces;
forces in world or foot axes, at a sensor offset from the ankle, normal forces only, sole
sensors at other places under other names; 200 and 500 Hz; a lifting foot keeping 1.5 N;
joint names mapped, their order shuffled per message; messages arriving up to 5 ms late.
Each bag is described by ``legid describe --bag`` (its user's options, no hand edit, no bag
rewrite), identified (floating-base rows: ``floating_qp``, ``sdp --rows floating``; ZMP rows:
``zmp_newton``, on Talos also from the sole sensors) and compared with the canonical bag
(:mod:`legid_ros.bench.conventions_diff`: in the combinations the canonical result's data
determine, and over every parameter); the parameters are validated on a second run. A
sampling control (``sampling_control``, in no maximum): the canonical setup read out 2 ms
later, the same rate and conventions but other samples of the run, shows how far another
sampling alone moves the parameters (what the 500 Hz variants also are). ``legid check`` runs
on each described bag (false alarms) and on eleven kinds of description mistakes
(:mod:`legid_ros.bench.conventions_check`).

Online part (``online``): each variant's bag goes message by message, in logged order, through
the buffer's core with its described description (:func:`legid_ros.bag.feed.bag_windows`, as
the buffer node receives it) and the online estimator's folding (as ``legid bench robots``);
its last result is compared with the canonical bag's online result.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from legid_ros.bench.conventions_diff import all_params_pct, determined_diff
from legid_ros.bench.conventions_check import (check_lines, description_file,
                                               humanoid_mistakes, solo_mistakes)
from legid_ros.bench.conventions_variants import (CANONICAL_RATE_HZ, ISSUE_VARIANTS,
                                                  RUN_RATE_HZ, humanoid_variants,
                                                  solo_variants)
from legid_ros.core.errors import LegidError

ROBOTS = ('solo12', 'talos')
ZMP = ('zmp_newton', 'zmp_newton', {'param_set': 'grouped_sides'})  # as legid bench robots
METHODS = {'solo12': (('floating_qp', 'floating_qp', {}),
                      ('sdp', 'sdp', {'rows': 'floating'}), ZMP),
           'talos': (('floating_qp', 'floating_qp', {}), ('sdp', 'sdp', {'rows': 'floating'}),
                     ZMP, ('zmp_newton_fsr', 'zmp_newton',
                           {'param_set': 'grouped_sides', 'zmp_source': 'fsr'}))}
ZMP_LABELS = ('zmp_newton', 'zmp_newton_fsr')
#: Parameter-difference figures: key suffix of the rows -> key of the maxima
SUFFIXES = {'': 'variant_param_diff_pct_max',
            '_all_params': 'variant_param_diff_pct_max_all_params'}
CONTROL = 'canonical_resampled'  # the sampling control's name (bags, rows)
CONTROL_SHIFT = 2  # [run samples] its readout starts this much later (2 ms at 1 kHz)
TARGETS = {'variant_dev_ratio_max': 1.05, 'variant_param_diff_pct_max': 0.5,
           'zmp_dev_ratio_to_truth_max': 1.2, 'description_hand_edited_lines_max': 3,
           'bag_rewrites': 0}


def add_arguments(parser) -> None:
    """Options of the benchmark."""
    parser.add_argument('--duration', type=float, default=45.0,
                        help='Solo12 run length, training and validation each [s]')
    parser.add_argument('--humanoid-duration', type=float, default=40.0,
                        help='Talos run length, training and validation each [s]')
    parser.add_argument('--robots', nargs='+', default=list(ROBOTS), choices=list(ROBOTS))
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--no-online', dest='online', action='store_false',
                        help='skip the online part (bag -> buffer -> estimator per variant)')
    parser.add_argument('--quick', action='store_true',
                        help='a check of the setup, not the measurement: ZMP methods only, no '
                             'online part, Talos 25 s (the default runs everything)')
    parser.add_argument('--keep', action='store_true',
                        help='keep the work directory (bags and descriptions, ~600 MB); it is '
                             'removed otherwise')


def _progress(text: str) -> None:
    print(f'bench conventions: {text}', file=sys.stderr, flush=True)


def _describe(canon, bag, out: Path, options: dict) -> str:
    """``legid describe --bag`` as the setup's user runs it (options of the variant)."""
    from legid_ros.commands import describe
    flat = any(f.contact == 'flat' for f in canon.feet.values())
    args = argparse.Namespace(
        urdf=str(canon.urdf_path), feet=','.join(f.link for f in canon.feet.values()),
        lock=[f'{j}={float(np.ravel(v)[0]):g}' for j, v in canon.locked_joints.items()],
        name=canon.name, corner_sensors=flat, fsr_topic=None, sensor_xyz=None,
        sensor_name=None, frame=[], bag=str(bag), imu_rpy=None, joint_map=[], out=str(out),
        foot_radius=next((f.radius for f in canon.feet.values() if f.radius), None))
    for key, value in options.items():
        setattr(args, key, value)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        describe.run(args)
    return str(out)


def _canonical(name: str, root: Path):
    """The robot whose run is read out: Solo12 with each foot's wrench about its link
    (floating rows need an F/T frame), Talos as shipped."""
    from legid_ros.core.robot import load_robot
    robot = load_robot(name)
    desc = copy.deepcopy(robot.description)
    if name == 'solo12':
        for f in desc['feet'].values():
            f['ft_frame'] = f['link']
    return load_robot(description_file(desc, robot.urdf_path, root / f'{name}_canon.yaml'))


def _variant(name, variant, run, canon, root: Path, methods, online: bool) -> dict:
    """One setup: its bag, described robot, check lines, batch and online results."""
    from legid_ros.bag.feed import bag_windows
    from legid_ros.bag.recording_io import read_bag, write_bag
    from legid_ros.bench.robots import PREP, _online
    from legid_ros.core.identification.api import identify
    from legid_ros.core.robot import load_robot
    from legid_ros.core.sim.conventions import message_plan, read_out

    ro = variant.readout
    tag = f'{canon.name}_{name}'
    setup_desc = ro.description(canon)
    setup = load_robot(description_file(setup_desc, canon.urdf_path, root / f'{tag}_setup.yaml'))
    raw = read_out(run, canon, ro)
    bag = write_bag(raw, root / f'{tag}_bag', robot=setup,
                    **message_plan(ro, raw.n, len(raw.joint_names)))
    _progress(f'{tag}: describe --bag, check, identify')
    path = _describe(canon, bag, root / f'{tag}_described.yaml', variant.describe)
    robot = load_robot(path)
    try:
        rec = read_bag(bag, robot)
    except LegidError as exc:  # the description would need a hand edit: said, left out
        return {'bag': str(bag), 'setup': setup_desc, 'check_lines': check_lines(path, bag),
                'results': {}, 'failures': {'read_bag': str(exc)}, 'rate_hz': None,
                'time_s': 0.0, 'online': None, 'online_result': None}
    t0 = time.perf_counter()
    entry = {'bag': str(bag), 'setup': setup_desc, 'check_lines': check_lines(path, bag),
             'results': {}, 'failures': {}, 'rate_hz': rec.rate}
    for label, method, opts in methods:
        if not variant.methods or label in variant.methods or method in variant.methods:
            try:
                entry['results'][label] = identify(rec, robot, method, **{**PREP, **opts})
            except LegidError as exc:  # not identifiable on this bag: said, left out
                entry['failures'][label] = f'{type(exc).__name__}: {exc}'
    entry['time_s'] = time.perf_counter() - t0
    if online:
        _progress(f'{tag}: bag -> buffer -> estimator (online, in-process)')
        entry['online'], entry['online_result'] = _online(
            rec, robot, 'grouped_sides', windows=bag_windows(bag, robot, **variant.buffer))
    return entry


def _robot(name: str, args, root: Path) -> dict:
    """Every figure of one robot and the bags its check mistakes need."""
    from legid_ros.bag.recording_io import read_bag, write_bag
    from legid_ros.bench.robots import validation_zmp
    from legid_ros.core.sim.described import perturbed_truth, simulate_described

    canon = _canonical(name, root)
    duration = args.duration if name == 'solo12' else args.humanoid_duration
    pi_true, _ = perturbed_truth(canon, seed=args.seed)
    _progress(f'{name}: simulating 2 x {duration:.0f} s in MuJoCo')
    run = simulate_described(canon, pi_true, duration_s=duration, rate_hz=RUN_RATE_HZ,
                             seed=args.seed, progress=False)
    val = read_bag(write_bag(simulate_described(
        canon, pi_true, duration_s=duration, rate_hz=CANONICAL_RATE_HZ, seed=args.seed + 1,
        progress=False), root / f'{name}_validation_bag', robot=canon), canon)
    feet = {f: foot.link for f, foot in canon.feet.items()}
    variants = solo_variants(feet) if name == 'solo12' else humanoid_variants(feet)
    methods = [m for m in METHODS[name] if not args.quick or m[0] in ZMP_LABELS]
    entries = {v: _variant(v, spec, run, canon, root, methods, args.online)
               for v, spec in variants.items()}
    control = _variant(CONTROL, variants['canonical'], run.slice(CONTROL_SHIFT, run.n), canon,
                       root, methods, False)
    pis = {'truth': pi_true}
    for v, e in [*entries.items(), (CONTROL, control)]:
        pis.update({f'{v}/{label}': res.pi for label, res in e['results'].items()})
    dev, _ = validation_zmp(val, canon, pis)
    out = {'variants': {}, 'duration_s': duration, 'run_rate_hz': RUN_RATE_HZ,
           'validation_dev_truth_mm': dev['truth']['mean_mm']}
    canon_res = entries['canonical']['results']
    ratios, diffs, diffs_all, truth = [], [], [], []
    for v, e in entries.items():
        out['variants'][v] = row = _row(v, e, dev, canon_res)
        for label in e['results']:
            if label not in row:
                continue
            if v != 'canonical':
                ratios.append(row[label]['dev_ratio_to_canonical'])
                diffs.append(row[label]['param_diff_pct_vs_canonical'])
                diffs_all.append(row[label]['param_diff_pct_vs_canonical_all_params'])
            if label in ZMP_LABELS:
                truth.append(row[label]['dev_ratio_to_truth'])
    out['sampling_control'] = dict(
        _row(CONTROL, control, dev, canon_res), shift_samples=CONTROL_SHIFT,
        what=f'the canonical setup read out {CONTROL_SHIFT} run samples later: the same rate '
             'and conventions, another sampling of the run (not a variant; in no maximum)')
    out.update(variant_dev_ratio_max=max(ratios), variant_param_diff_pct_max=_max(diffs),
               variant_param_diff_pct_max_all_params=max(diffs_all),
               zmp_dev_ratio_to_truth_max=max(truth),
               check_false_alarms=sum(len(e['check_lines']) for e in entries.values()),
               described_bags_unreadable=[v for v, e in entries.items()
                                          if 'read_bag' in e['failures']],
               variants_covered=len(entries) - 1)
    if args.online:
        out['online'] = _online_figures(entries)
    out['_bags'] = {v: (e['bag'], e['setup']) for v, e in entries.items()}
    out['_run'], out['_canon'] = run, canon
    return out


def _param_diffs(canon, res) -> dict:
    """A result's parameter differences to the canonical one (:mod:`.conventions_diff`)."""
    det = determined_diff(canon, res)
    return {'param_diff_pct_vs_canonical': None if det is None else det['pct'],
            'param_diff_std_vs_canonical': None if det is None else det['diff_std'],
            'determined_combinations': None if det is None else
            f"{det['combinations']} of {det['of']}",
            'param_diff_pct_vs_canonical_all_params': all_params_pct(canon, res)}


def _max(values: list):
    """Largest value; None if one is None (a result without an uncertainty)."""
    return None if None in values else max(values)


def _row(v: str, e: dict, dev: dict, canon_res: dict) -> dict:
    """One setup's figures: per method, validation deviation and parameter differences."""
    row = {'check_false_alarm_lines': e['check_lines'], 'rate_hz': e['rate_hz'],
           'identify_check_s': e['time_s']}
    if e['failures']:
        row['failures'] = e['failures']
    for label, res in e['results'].items():
        if label in canon_res:
            d = dev[f'{v}/{label}']['mean_mm']
            row[label] = {'validation_dev_mm': d,
                          'dev_ratio_to_canonical': d / dev[f'canonical/{label}']['mean_mm'],
                          'dev_ratio_to_truth': d / dev['truth']['mean_mm'],
                          **_param_diffs(canon_res[label], res)}
    return row


def _online_figures(entries: dict) -> dict:
    """Per variant, the online figures and the difference to the canonical online result."""
    ref = entries['canonical']['online_result']
    out = {}
    for v, e in entries.items():
        res = e['online_result']
        both = res is not None and ref is not None
        out[v] = dict(e['online'] or {}, **(_param_diffs(ref, res) if both else dict.fromkeys(
            ('param_diff_pct_vs_canonical', 'param_diff_pct_vs_canonical_all_params'))))
    fig = {k: _max([e[f'param_diff_pct_vs_canonical{s}'] for v, e in out.items()
                    if v != 'canonical']) for s, k in SUFFIXES.items()}
    return {'variants': out, **fig}


def _solo_extra_bags(part: dict, root: Path) -> dict:
    """Bags of the Solo12 run with the force of the foot on the ground and a 1.6 gain."""
    from legid_ros.bag.recording_io import write_bag
    from legid_ros.core.robot import load_robot
    from legid_ros.core.sim.conventions import Readout, read_out
    run, canon = part['_run'], part['_canon']
    out = {}
    for name, gain in (('flipped', -1.0), ('heavy', 1.6)):
        ro = Readout(rate_hz=CANONICAL_RATE_HZ, force_gain=gain)
        desc = ro.description(canon)
        setup = load_robot(description_file(desc, canon.urdf_path, root / f'{name}.yaml'))
        out[name] = (str(write_bag(read_out(run, canon, ro), root / f'solo12_{name}_bag',
                                   robot=setup)), desc)
    return out


def run(args) -> dict:
    """Run the benchmark in a work directory removed afterwards unless ``--keep``."""
    if args.quick:
        args.online, args.humanoid_duration = False, min(args.humanoid_duration, 25.0)
    root = Path(tempfile.mkdtemp(prefix='bench_conventions_'))
    try:
        out = _run_in(args, root)
    finally:
        if getattr(args, 'keep', False):
            _progress(f'work directory kept: {root}')
        else:
            shutil.rmtree(root, ignore_errors=True)
    return out


def _run_in(args, root: Path) -> dict:
    """The benchmark with its bags and descriptions under ``root``."""
    parts = {name: _robot(name, args, root) for name in args.robots}
    mistakes = {}
    if 'solo12' in parts:
        _progress('check: description mistakes (solo12)')
        bags = {**parts['solo12']['_bags'], **_solo_extra_bags(parts['solo12'], root)}
        mistakes.update(solo_mistakes(bags, parts['solo12']['_canon'].urdf_path, root))
    if 'talos' in parts:
        _progress('check: description mistakes (talos)')
        bag, desc = parts['talos']['_bags']['canonical']
        mistakes.update(humanoid_mistakes(bag, desc, parts['talos']['_canon'].urdf_path,
                                          root))
    for part in parts.values():
        for key in ('_bags', '_run', '_canon'):
            part.pop(key)
    out = {'robots': parts}
    for key in ('variant_dev_ratio_max', *SUFFIXES.values(), 'zmp_dev_ratio_to_truth_max'):
        out[key] = _max([p[key] for p in parts.values()])
    covered = {issue: {r: v for r, v in by_robot.items() if r in parts}
               for issue, by_robot in ISSUE_VARIANTS.items()}
    out.update(
        description_hand_edited_lines_max=0, bag_rewrites=0,
        check_mistakes_detected_pct=100.0 * float(np.mean([m['flagged']
                                                            for m in mistakes.values()])),
        check_mistake_types=len(mistakes),
        check_false_alarms=sum(p['check_false_alarms'] for p in parts.values()),
        variants_covered=sum(p['variants_covered'] for p in parts.values()),
        issue_variants_covered=f'{sum(1 for c in covered.values() if c)} of '
                               f'{len(ISSUE_VARIANTS)}',
        issue_variants=covered, check={'mistakes': mistakes})
    if args.online:
        out['online'] = {k: _max([p['online'][k] for p in parts.values()])
                         for k in SUFFIXES.values()}
    out['targets'] = TARGETS
    out['quick'] = bool(args.quick)
    out['passed'] = bool(all(out[k] is not None and out[k] <= t for k, t in TARGETS.items())
                         and out['check_mistakes_detected_pct'] >= 95.0
                         and out['check_mistake_types'] >= 10
                         and out['check_false_alarms'] == 0
                         and not any(p['described_bags_unreadable'] for p in parts.values()))
    return out
