"""``legid bench autoset``: the parameter set chosen by the data on a humanoid.

A humanoid we did not design (Talos from example-robot-data, upper body locked, as ``legid
bench robots``) whose truth is :func:`legid_ros.core.sim.described.perturbed_truth` (3-D COM
shifts, mass and inertia changes, a box on one leg, a payload on the trunk) with, on top, the
thigh COM moved ``--thigh-shift-mm`` down the leg (along the leg axis of
:mod:`legid_ros.core.identification.parameters.auto`, both sides). Training and validation runs
(other seed) simulated in MuJoCo; ``zmp_newton`` on the set chosen by the data (``auto``) and,
for comparison, on the other sets (and ``zmp_qp`` on the standard set).

Figures per set: ``thigh_com_err_mm`` (3-D error of the thigh group's COM, the sides' mirrored
mean, against the truth's), ``thigh_axial_com_err_mm`` (its component along the leg),
``thigh_mass_err_pct``, ``group_mass_err_pct_max`` (over every link group's total mass) and
``group_mass_err_pct_max_estimated`` (over the groups whose mass the set estimates), and
``zmp_dev_ratio_to_truth`` (validation ZMP deviation, identified / true parameters);
``thigh_determinacy``: whether the fit's own uncertainty says the data determine the thigh's
mass and COM (:func:`thigh_determinacy`). ``motion`` names the excitation of both runs.
:func:`autoset_humanoid_case` returns the dict (another bench may call it).
"""

from __future__ import annotations

import sys
import time
from typing import Dict, List, Optional, Sequence

import numpy as np

from legid_ros.core.errors import LegidError

TARGETS = {'thigh_com_err_mm': 3.0, 'group_mass_err_pct_max': 2.0,
           'zmp_dev_ratio_to_truth': 1.15}
#: The motion of both runs (the issue does not fix it)
MOTION = ('standing excitation (legid_ros.core.sim.described.excitation.plan_standing: trunk '
          'shifts, tilts and bobs on both feet, then each foot lifted and moved), planned on '
          'the CAD model')
#: (label, method, param_set) compared with auto
SETS = (('auto', 'zmp_newton', 'auto'), ('reduced', 'zmp_newton', 'reduced'),
        ('grouped', 'zmp_newton', 'grouped'), ('grouped_sides', 'zmp_newton', 'grouped_sides'),
        ('standard', 'zmp_qp', 'standard'), ('auto_zmp_qp', 'zmp_qp', 'auto'))


def add_arguments(parser) -> None:
    """Arguments of ``legid bench autoset``."""
    parser.add_argument('--robot', default='talos', help='robot under config/robots/ or a '
                        'description YAML')
    parser.add_argument('--duration', type=float, default=60.0, help='training run [s]')
    parser.add_argument('--validation', type=float, default=45.0, help='validation run [s]')
    parser.add_argument('--rate', type=float, default=200.0, help='recording rate [Hz]')
    parser.add_argument('--thigh-shift-mm', type=float, default=10.0,
                        help='true thigh COM shift down the leg on top of the perturbed truth')
    parser.add_argument('--sets', nargs='+', default=[s[0] for s in SETS],
                        choices=[s[0] for s in SETS], help='sets compared')
    parser.add_argument('--seed', type=int, default=0, help='seed of the truth and the runs')
    parser.add_argument('--skip-cad-case', action='store_true',
                        help='no second case whose truth is CAD with the thigh shift alone')


def _progress(msg: str) -> None:
    print(f'legid bench autoset: {msg}', file=sys.stderr, flush=True)


def thigh_unit(robot) -> str:
    """The thigh's link group: among the groups with a leg axis, the one whose segment (joint to
    the next joint away from it) is longest, the heaviest on a tie."""
    from legid_ros.core.identification.parameters.auto.levels import AutoSet
    from legid_ros.core.inertial import link_index
    import pinocchio as pin

    auto = AutoSet(robot, {})
    data = robot.model.createData()
    pin.forwardKinematics(robot.model, data, robot.neutral())
    best, key = None, None
    for mem in auto.grouped.members:
        unit = auto.units[mem.unit]
        if auto.axes[unit] is None:
            continue
        jid = link_index(robot.model, robot.body_names[mem.index]) + 1
        kids = [c for c in range(1, robot.model.njoints) if robot.model.parents[c] == jid]
        length = 0.0
        while len(kids) == 1 and length < 1e-4:
            length = float(np.linalg.norm(data.oMi[kids[0]].translation
                                          - data.oMi[jid].translation))
            kids = [c for c in range(1, robot.model.njoints)
                    if robot.model.parents[c] == kids[0]]
        k = (round(length, 3), float(auto.grouped.cad()[auto.grouped.width * mem.unit]))
        if key is None or k > key:
            best, key = unit, k
    return best


def shifted_truth(robot, seed: int, unit: str, shift_m: float, base: str = 'perturbed'):
    """The truth: every link of ``unit`` moved ``shift_m`` [m] along its leg axis on top of
    :func:`perturbed_truth`'s random change (``base='perturbed'``) or of CAD (``'cad'``: the
    shift alone); ``(pi_true, info)``."""
    from legid_ros.core.identification.parameters.auto.levels import AutoSet, leg_axis
    from legid_ros.core.sim.described.truth import truth_table
    from legid_ros.core.synthetic.truth import LinkChange
    from legid_ros.core.synthetic.truth import perturbed_truth as apply_table
    from legid_ros.core.sim.described import perturbed_truth

    if base == 'perturbed':
        _, info = perturbed_truth(robot, seed=seed)
        table = truth_table(robot, seed)
    else:
        info, table = {'class': 'cad_plus_thigh_shift'}, {}
    auto = AutoSet(robot, {})
    links = [robot.body_names[m.index] for m in auto.grouped.members
             if auto.units[m.unit] == unit]
    for link in links:
        change = table.get(link, LinkChange(1.0, np.zeros(3)))
        table[link] = change._replace(shift=np.asarray(change.shift, float)
                                      + shift_m * leg_axis(robot, link))
    pi = apply_table(robot, table)
    info = dict(info, thigh_unit=unit, thigh_links=links, thigh_shift_mm=1e3 * shift_m,
                mass_true_kg=float(pi[0::10].sum()))
    return pi, info


def set_errors(robot, unit: str, pi, pi_true, estimated: Sequence[str]) -> dict:
    """Thigh and group errors of ``pi`` against ``pi_true`` (see the module docstring)."""
    from legid_ros.core.identification.parameters.auto.levels import AutoSet
    auto = AutoSet(robot, {})
    grp = auto.grouped
    x, xt = grp.from_standard(pi), grp.from_standard(pi_true)
    w = grp.width
    count = np.bincount([m.unit for m in grp.members], minlength=grp.n_groups)
    u = auto.units.index(unit)
    dc = x[w * u + 1:w * u + 4] - xt[w * u + 1:w * u + 4]
    mass = {name: 100 * abs(x[w * k] - xt[w * k]) / xt[w * k] for k, name in
            enumerate(auto.units)}
    est = [mass[n] for n in estimated if n in mass]
    return {'thigh_com_err_mm': 1e3 * float(np.linalg.norm(dc)),
            'thigh_axial_com_err_mm': 1e3 * abs(float(dc @ auto.axes[unit])),
            'thigh_mass_err_pct': float(mass[unit]),
            'group_mass_err_pct_max': float(max(mass.values())),
            'group_mass_err_pct_max_estimated': float(max(est)) if est else None,
            'group_mass_err_pct': {k: float(v) for k, v in mass.items()},
            'group_mass_kg': {k: float(x[w * i] * count[i]) for i, k in enumerate(auto.units)}}


def thigh_determinacy(res, links: Sequence[str]) -> Optional[dict]:
    """What the fit's summary (:mod:`legid_ros.core.identification.summary`, from the fit's
    own uncertainty) says of the thigh's first link: per quantity (mass, COM x/y/z in the
    link frame) whether the data determine it, its std and its data-only std [kg or mm];
    the determined whole-robot and group quantities; None without a summary."""
    ph = getattr(res, 'physical', None)
    if ph is None:
        return None

    def num(x):
        return float(x) if np.isfinite(x) else None

    out = {'link': links[0]}
    for q in ph.of_kind('link'):
        if q.name.startswith(links[0] + ' '):
            key = q.name[len(links[0]) + 1:].replace('COM ', 'com_')
            out[key] = {'determined': bool(q.determined), 'std': num(q.std),
                        'std_data': num(q.std_data)}
    out['determined_elsewhere'] = [q.name for q in ph.quantities
                                   if q.kind != 'link' and q.determined]
    return out


def _estimated_units(robot, res, param_set: str) -> List[str]:
    """Groups whose mass the set estimates."""
    from legid_ros.core.identification.parameters.auto.levels import AutoSet
    units = AutoSet(robot, {}).units
    if param_set == 'auto':
        levels = res.info.get('levels') or res.info['auto_selection']['levels']
        return [u for u in units if levels.get(u, 'none') != 'none']
    return list(units)


def autoset_humanoid_case(robot_name: str = 'talos', duration_s: float = 60.0,
                          validation_s: float = 45.0, rate_hz: float = 200.0, seed: int = 0,
                          thigh_shift_mm: float = 10.0,
                          sets: Optional[Sequence[str]] = None,
                          truth_base: str = 'perturbed') -> Dict[str, object]:
    """The humanoid case (see the module docstring) as a dict: ``auto`` figures at the top,
    every set's under ``sets``, the selection table under ``selection``; ``truth_base``
    'perturbed' (:func:`perturbed_truth` plus the shift) or 'cad' (the shift alone)."""
    from legid_ros.bench.robots import PREP, description_path, validation_zmp
    from legid_ros.core.identification.api import identify
    from legid_ros.core.robot import load_robot
    from legid_ros.core.sim.described import simulate_described

    robot = load_robot(description_path(robot_name))
    unit = thigh_unit(robot)
    pi_true, info = shifted_truth(robot, seed, unit, 1e-3 * thigh_shift_mm, truth_base)
    t0 = time.perf_counter()
    _progress(f'{robot_name}: simulating {duration_s:.0f} s + {validation_s:.0f} s in MuJoCo')
    train = simulate_described(robot, pi_true, duration_s=duration_s, rate_hz=rate_hz,
                               seed=seed)
    val = simulate_described(robot, pi_true, duration_s=validation_s, rate_hz=rate_hz,
                             seed=seed + 100)
    if train.meta['fell'] or val.meta['fell']:
        raise LegidError(f'{robot_name}: the robot fell in a simulated run')
    out: Dict[str, object] = {'robot': robot_name, 'truth': info, 'thigh_unit': unit,
                              'motion': MOTION, 'training_seed': seed,
                              'validation_seed': seed + 100,
                              'simulation_s': time.perf_counter() - t0, 'targets': TARGETS}
    pis = {'truth': pi_true, 'urdf': train.pi_cad}
    entries: Dict[str, dict] = {}
    for label, method, param_set in SETS:
        if sets is not None and label not in sets:
            continue
        _progress(f'{label}: {method} on the {param_set} set')
        t1 = time.perf_counter()
        try:
            res = identify(train, robot, method, param_set=param_set, **PREP)
        except LegidError as exc:  # reported, not hidden
            entries[label] = {'error': f'{type(exc).__name__}: {exc}'}
            continue
        entry = {'method': method, 'param_set': param_set,
                 'time_s': time.perf_counter() - t1, 'status': res.info.get('status'),
                 'consistent': bool(res.consistency.ok), 'reg': res.info.get('reg_chosen')}
        if 'auto_selection' in res.info:
            entry['selection'] = res.info['auto_selection']
        entry.update(set_errors(robot, unit, res.pi, pi_true,
                                _estimated_units(robot, res, param_set)))
        entry['thigh_determinacy'] = thigh_determinacy(res, info['thigh_links'])
        entries[label] = entry
        pis[label] = res.pi
    dev, _ = validation_zmp(val, robot, pis)
    floor = dev['truth']['mean_mm']
    for label, entry in entries.items():
        if label in dev:
            entry['zmp_dev_mm'] = dev[label]['mean_mm']
            entry['zmp_dev_ratio_to_truth'] = dev[label]['mean_mm'] / floor
    out.update({'zmp_dev_truth_mm': floor, 'zmp_dev_urdf_mm': dev['urdf']['mean_mm'],
                'sets': entries})
    cad = set_errors(robot, unit, train.pi_cad, pi_true, [])
    out['cad'] = {k: cad[k] for k in ('thigh_com_err_mm', 'thigh_axial_com_err_mm',
                                      'thigh_mass_err_pct', 'group_mass_err_pct_max')}
    auto = entries.get('auto', {})
    for key in ('thigh_com_err_mm', 'thigh_axial_com_err_mm', 'thigh_mass_err_pct',
                'group_mass_err_pct_max', 'group_mass_err_pct_max_estimated',
                'zmp_dev_ratio_to_truth', 'selection', 'thigh_determinacy'):
        out[key] = auto.get(key)
    out['passed'] = bool(all(out.get(k) is not None and out[k] <= v
                             for k, v in TARGETS.items()))
    return out


def run(args) -> Dict[str, object]:
    """Run the benchmark; returns the JSON dict."""
    out = autoset_humanoid_case(args.robot, args.duration, args.validation, args.rate,
                                args.seed, args.thigh_shift_mm, args.sets)
    if not args.skip_cad_case:  # the shift alone (every other link at CAD): not in targets
        _progress('second case: CAD with the thigh shift alone')
        out['cad_plus_shift'] = autoset_humanoid_case(
            args.robot, args.duration, args.validation, args.rate, args.seed,
            args.thigh_shift_mm, args.sets, truth_base='cad')
    return out


__all__: List[str] = ['add_arguments', 'autoset_humanoid_case', 'run', 'set_errors',
                      'shifted_truth', 'thigh_determinacy', 'thigh_unit']
