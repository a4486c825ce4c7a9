"""``legid excite``: design a whole-body excitation that identifies a described robot's legs.

Designs the motion on the CAD model, or with ``--urdf`` on another model of the same robot (the
URDF ``legid identify`` wrote from a standing run: the ZMP / CoP margin is then kept about the
identified COM, not CAD's) (:mod:`legid_ros.core.excitation.design`: stance feet
fixed, ZMP / CoP inside the support with a margin, joint, velocity and torque limits, swing
clearance, no self-collision, chosen for the predicted identifiability of ``--param-set``) and
writes into ``--out``:

- ``excitation.yaml``: joint names, the knots of the clamped cubic spline (times [s], joint
  positions [rad]), the phases with their stance feet, the model planned on (URDF, total mass
  [kg]), the design's numbers;
- ``excitation.csv``: ``t`` and per joint its position [rad], velocity [rad/s] and the
  feedforward torque of the model planned on [N.m] every ``--dt`` seconds;
- ``reference/``: a rosbag2 with one ``trajectory_msgs/JointTrajectory`` on
  ``/legid/reference`` (what the controller node subscribes to);
- ``identifiability.yaml`` and ``identifiability.txt``: predicted std per combination (and
  which are determined within 2 % mass / 3 mm COM), for the designed and the standing motion,
  and the set's static ceiling (how many combinations any quasi-static motion could determine,
  and which parameters only accelerations reach: :mod:`legid_ros.core.excitation.ceiling`);
- ``support_zmp.png``, ``joint_ranges.png``, ``predicted_std.png``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``legid excite``."""
    parser.add_argument('--robot', required=True,
                        help='robot: a description YAML, a name under config/robots/, or biped')
    parser.add_argument('--duration', type=float, default=120.0, help='length [s] (120)')
    parser.add_argument('--param-set', default='grouped_sides',
                        choices=['grouped_sides', 'grouped', 'reduced'],
                        help='parameter set whose identifiability is maximised')
    parser.add_argument('--out', default='excitation', help='output directory')
    parser.add_argument('--budget', type=float, default=90.0,
                        help='design time budget [s] (90)')
    parser.add_argument('--zmp-margin', type=float, default=0.01,
                        help='ZMP / CoP margin inside the support polygon [m] (0.01)')
    parser.add_argument('--dt', type=float, default=0.02, help='CSV and bag step [s] (0.02)')
    parser.add_argument('--overwrite', action='store_true', help='replace the reference bag')
    parser.add_argument('--urdf', default=None,
                        help="plan on this URDF instead of the description's (e.g. the one "
                             '`legid identify` wrote from a standing run): same links and '
                             'joints, other inertials')


def _robot(name: str, urdf=None):
    from legid_ros.bench.robots import description_path
    from legid_ros.core.robot import load_robot
    if name == 'biped':
        return load_robot('biped', urdf=urdf)
    return load_robot(description_path(name), urdf=urdf)


def _prediction_dict(cand) -> dict:
    from legid_ros.core.excitation.information import combination_tolerance
    p = cand.prediction
    u = p.uncertainty
    tol = combination_tolerance(u)
    return {'determined': int(p.determined.sum()), 'combinations': int(p.determined.size),
            'fraction': float(p.fraction),
            'parameters': {n: {'cad': float(v), 'std': float(s)}
                           for n, v, s in zip(u.names, u.value, u.std)},
            'combination_list': [
                {'combination': c, 'std_over_tolerance': float(s / t),
                 'bias_over_tolerance': float(b / t), 'determined': bool(ok)}
                for c, s, b, t, ok in zip(u.combinations, u.combination_total_std, p.bias, tol,
                                          p.determined)]}


def write_outputs(robot, des, out: Path, dt: float, overwrite: bool = False) -> dict:
    """Every file of the module docstring; returns their paths."""
    import yaml

    from legid_ros.bag.trajectory_bag import write_reference_bag
    from legid_ros.core.atomic_files import write_text
    from legid_ros.core.excitation import plots
    from legid_ros.core.excitation.trajectory import sample_plan

    best = des.best
    out.mkdir(parents=True, exist_ok=True)
    names = list(robot.actuated_joint_names)
    plan = best.plan
    traj = best.trajectory if abs(best.trajectory.dt - dt) < 1e-12 else sample_plan(
        robot, plan, des.pi_cad, dt)
    q, qd = traj.q[:, 7:], traj.v[:, 6:]
    qdd = traj.a[:, 6:]
    files = {}
    doc = {'robot': robot.name, 'joint_names': names, 'duration_s': float(plan.duration_s),
           'interpolation': 'clamped cubic spline through the knots',
           'knots': {'t': [float(x) for x in plan.t],
                     'q': [[float(x) for x in row[7:]] for row in plan.q]},
           'phases': [{'name': n, 't0': float(a), 't1': float(b), 'stance': list(s)}
                      for n, a, b, s in plan.phases],
           'model': {'urdf': str(robot.urdf_path), 'total_mass_kg': float(robot.total_mass)},
           'design': best.summary(), 'design_s': float(des.design_s),
           'constraints': best.constraints.as_dict()}
    files['yaml'] = write_text(out / 'excitation.yaml', yaml.safe_dump(doc, sort_keys=False))
    header = ['t'] + [f'q:{n}' for n in names] + [f'qd:{n}' for n in names] + [
        f'tau_ff:{n}' for n in names]
    table = np.hstack([traj.t[:, None], q, qd, traj.tau_cad])
    lines = [','.join(header)] + [','.join(f'{x:.6g}' for x in row) for row in table]
    files['csv'] = write_text(out / 'excitation.csv', '\n'.join(lines) + '\n')
    files['bag'] = write_reference_bag(out / 'reference', names, traj.t, q, qd, qdd,
                                       overwrite=overwrite)
    report = {'designed': _prediction_dict(best)}
    if des.baseline is not None:
        report['standing'] = _prediction_dict(des.baseline)
    if des.ceiling is not None:
        report['static_ceiling'] = des.ceiling.as_dict()
    files['identifiability'] = write_text(out / 'identifiability.yaml',
                                          yaml.safe_dump(report, sort_keys=False))
    text = ['designed excitation:'] + best.prediction.lines()
    if des.baseline is not None:
        text += ['', 'standing excitation (before):'] + des.baseline.prediction.lines()
    if des.ceiling is not None:
        text += [''] + des.ceiling.lines()
    files['report'] = write_text(out / 'identifiability.txt', '\n'.join(text) + '\n')
    files['support_zmp'] = plots.plot_support(robot, best, out / 'support_zmp.png')
    files['joint_ranges'] = plots.plot_joint_ranges(robot, best, out / 'joint_ranges.png')
    files['predicted_std'] = plots.plot_std(best, des.baseline, out / 'predicted_std.png',
                                            des.ceiling.rank if des.ceiling else None)
    return {k: str(v) for k, v in files.items()}


def run(args: argparse.Namespace) -> int:
    """Design, write, print a summary; 1 when no feasible motion was found."""
    from legid_ros.core.excitation.constraints import Limits
    from legid_ros.core.excitation.design import ExcitationProblem, design

    robot = _robot(args.robot, args.urdf)
    problem = ExcitationProblem(robot, args.duration, args.param_set,
                                limits=Limits(zmp_margin_m=args.zmp_margin), dt=args.dt)
    des = design(problem, budget_s=args.budget,
                 progress=lambda m: print(f'legid excite: {m}', file=sys.stderr, flush=True))
    files = write_outputs(robot, des, Path(args.out), args.dt, args.overwrite)
    best = des.best
    print(f'{robot.name}: {best.plan.duration_s:.0f} s designed in {des.design_s:.0f} s; '
          f'feasible {best.feasible}; predicted {int(best.prediction.determined.sum())} of '
          f'{best.prediction.determined.size} combinations determined'
          + (f' (standing excitation: {int(des.baseline.prediction.determined.sum())})'
             if des.baseline else '')
          + (f'; at most {des.ceiling.rank} by any quasi-static motion, the rest only through '
             'accelerations' if des.ceiling else ''))
    for k, v in files.items():
        print(f'  {k}: {v}')
    return 0 if best.feasible else 1
