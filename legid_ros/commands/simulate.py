"""``legid simulate``: write a rosbag2 of a simulated robot doing an identification excitation.

The built-in biped does the ZMP-identification excitation (synthetic or MuJoCo); any other
described robot (``config/robots/*.yaml``, your own) its standing excitation in MuJoCo.

The excitation and the default truth follow Wu & Gao 2021 (docs/references.md).
"""

from __future__ import annotations

import argparse
import importlib
import time

from legid_ros.core.errors import BadInputError, LegidError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``legid simulate``."""
    parser.add_argument('--robot', default='biped', help='robot name or description YAML')
    parser.add_argument('--duration', type=float, default=95.0, help='run length [s]')
    parser.add_argument('--rate', type=float, default=1000.0, help='sample rate [Hz]')
    parser.add_argument('--seed', type=int, default=0, help='seed of the motion and the noise')
    parser.add_argument('--noise', choices=['none', 'default'], default='default',
                        help='sensor noise model')
    parser.add_argument('--truth', choices=['table2', 'cad', 'seed000', 'out_of_model'],
                        default='table2',
                        help="true parameters: CAD perturbed by Wu & Gao's Table 2 (table2; "
                        "seed000 is its former spelling), or the CAD ones (cad); robots other "
                        'than the built-in biped are simulated in MuJoCo from their description '
                        'with an out-of-model truth (3-D COM shifts, a heavier leg, a payload) '
                        'unless cad')
    parser.add_argument('--no-friction', action='store_true',
                        help='joint efforts without joint friction')
    parser.add_argument('--speed', type=float, default=1.0, help='motion speed scale')
    parser.add_argument('--zmp-margin', type=float, default=0.015,
                        help='smallest ZMP distance to the sole edge [m]')
    parser.add_argument('--out', default='run.mcap',
                        help='bag directory to write; NAME.mcap or NAME.db3 writes the directory '
                        'NAME/ holding NAME.mcap (as ros2 bag record -o NAME)')
    parser.add_argument('--storage', choices=['mcap', 'sqlite3'], default=None,
                        help='bag storage (default: sqlite3 if --out ends in .db3, else mcap)')
    parser.add_argument('--engine', choices=['synthetic', 'mujoco'], default='synthetic',
                        help='exact synthetic data or MuJoCo physics')
    parser.add_argument('--force', action='store_true', help='overwrite an existing bag')
    parser.add_argument('--protocol', choices=['right', 'swap'], default='right',
                        help="excitation: 'right' (single support on the right foot, Wu & Gao "
                        "2021; the benchmarks' protocol) or 'swap' (right, a double-support "
                        'transfer, then the left: both feet weighed by their ankle F/T; '
                        'synthetic engine)')
    parser.add_argument('--payload-kg', type=float, default=0.0,
                        help='mass added to the trunk at --payload-at-s [kg] (synthetic engine)')
    parser.add_argument('--payload-at-s', type=float, default=0.0,
                        help='run time when the payload is added [s]')
    parser.add_argument('--imu-yaw-offset-deg', type=float, default=0.0,
                        help='heading error of the recorded IMU orientation [deg]')
    parser.add_argument('--imu-yaw-drift-deg-s', type=float, default=0.0,
                        help='heading drift of the recorded IMU orientation [deg/s]')


def _mujoco():
    try:
        module = importlib.import_module('legid_ros.core.sim.mujoco_biped')
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith('legid_ros.core.sim'):
            raise LegidError('engine "mujoco" is not available in this build') from exc
        raise
    if not hasattr(module, 'simulate_biped_mujoco'):
        raise LegidError('engine "mujoco" is not available in this build')
    return module.simulate_biped_mujoco


def _run_described(args, robot, out, storage) -> int:
    """Any other robot: its standing excitation in MuJoCo (core.sim.described), written as a
    bag; the truth is out of model (``--truth table2``, the biped's table, does not apply)."""
    from legid_ros.bag.recording_io import write_bag
    from legid_ros.core.inertial import get_parameters
    from legid_ros.core.sim.described import perturbed_truth, simulate_described
    from legid_ros.core.synthetic import NoiseModel

    start = time.perf_counter()
    pi, info = (get_parameters(robot.model), {'class': 'cad'}) if args.truth == 'cad' \
        else perturbed_truth(robot, seed=args.seed)
    rec = simulate_described(robot, pi, duration_s=args.duration, rate_hz=args.rate,
                             seed=args.seed,
                             noise=NoiseModel.none() if args.noise == 'none' else None)
    rec.meta['truth'] = info
    out = write_bag(rec, out, storage=storage, robot=robot, overwrite=args.force)
    print(f'wrote {out} ({storage}): {rec.n} samples, {rec.t[-1] - rec.t[0]:.3f} s at '
          f'{rec.rate:.1f} Hz, {robot.name} standing excitation in MuJoCo, truth '
          f'{info["class"]}, seed {args.seed}, fell: {rec.meta["fell"]}')
    if rec.meta.get('tempered_targets'):
        print(f'{rec.meta["tempered_targets"]} random targets of the excitation were beyond the '
              f"robot's joint ranges: each taken part of the way")
    print(f'simulation and bag {time.perf_counter() - start:.1f} s')
    return 0


def run(args: argparse.Namespace) -> int:
    """Simulate, write the bag, print a summary."""
    from legid_ros.bag.discover import output_bag
    from legid_ros.bag.recording_io import write_bag
    from legid_ros.core.robot import load_robot
    from legid_ros.core.synthetic import (FrictionModel, NoiseModel, SyntheticConfig,
                                          simulate_biped)

    robot = load_robot(args.robot)
    out, storage = output_bag(args.out, args.storage)
    if out.exists() and not args.force:
        raise BadInputError(f'{out} exists; use --force to overwrite')
    if robot.name != 'biped':
        return _run_described(args, robot, out, storage)
    config = SyntheticConfig(duration_s=args.duration, rate_hz=args.rate, seed=args.seed,
                             noise=NoiseModel.none() if args.noise == 'none' else NoiseModel(),
                             friction=FrictionModel.none() if args.no_friction
                             else FrictionModel(),
                             zmp_margin=args.zmp_margin, speed_scale=args.speed,
                             robot=args.robot, protocol=args.protocol,
                             payload_kg=args.payload_kg, payload_at_s=args.payload_at_s,
                             imu_yaw_offset_deg=args.imu_yaw_offset_deg,
                             imu_yaw_drift_deg_s=args.imu_yaw_drift_deg_s)
    if args.truth == 'cad':
        config.truth = {}
    start = time.perf_counter()
    if args.engine == 'mujoco':
        if args.protocol != 'right' or args.payload_kg > 0:
            raise BadInputError('the mujoco engine runs the right-support protocol without a '
                                'payload only (--protocol right, --payload-kg 0)')
        rec = _mujoco()(config)
        if args.imu_yaw_offset_deg or args.imu_yaw_drift_deg_s:
            from legid_ros.core.synthetic.scenario import imu_heading_error
            rec.imu_quat = imu_heading_error(rec.imu_quat, rec.t, args.imu_yaw_offset_deg,
                                             args.imu_yaw_drift_deg_s)
    else:
        rec = simulate_biped(config, robot)
    sim_s = time.perf_counter() - start
    out = write_bag(rec, out, storage=storage, robot=robot, overwrite=args.force)
    total = time.perf_counter() - start
    zmp = rec.zmp_true
    print(f'wrote {out} ({storage}): {rec.n} samples, {rec.t[-1] - rec.t[0]:.3f} s at '
          f'{rec.rate:.1f} Hz, engine {rec.meta.get("engine", args.engine)}, seed {args.seed}, '
          f'noise {args.noise}')
    if zmp is not None:
        print(f'true ZMP range x [{zmp[:, 0].min() * 1e3:.1f}, {zmp[:, 0].max() * 1e3:.1f}] mm,'
              f' y [{zmp[:, 1].min() * 1e3:.1f}, {zmp[:, 1].max() * 1e3:.1f}] mm')
    if 'phases' in rec.meta:
        print('phases: ' + ', '.join(f'{name} {t0:.1f}-{t1:.1f} s'
                                     for name, t0, t1 in rec.meta['phases']))
    if 'payload' in rec.meta:
        print(f"payload {rec.meta['payload']['mass_kg']:g} kg on the trunk at "
              f"{rec.meta['payload']['at_s']:g} s")
    print(f'simulation {sim_s:.1f} s, total {total:.1f} s')
    return 0
