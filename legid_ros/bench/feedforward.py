"""``legid bench feedforward``: closed-loop tracking in MuJoCo with PD / CV / two-step feedforward.

Protocol (after Xiao, Qian & Luo 2025, section 5.4), all on MuJoCo physics (the plant is not our
model):

1. Plant: leg3 with *true* inertials (CAD perturbed, :func:`legid_ros.core.synthetic.leg.
   make_truth`), armature = reflected rotor inertia, and the description's ``true_friction``
   law (Stribeck + viscous + ``|v|^1.5`` + ripple; see :class:`PlantFriction`).
2. Identification data recorded from that plant under PD + CAD feedforward: one constant-speed
   sweep per joint (step 1 of the two-step method) and a Fourier excitation run, with torque
   noise equal to the description's current noise.
3. Identification (:mod:`legid_ros.core.identification.fixed_base`): two-step = piecewise
   friction fitted on the sweeps, then the consistent SDP on the excitation; unified
   Coulomb-viscous on the excitation only.
4. Validation: the paper's tracking test (Fourier, omega = 2.4 rad/s, 60 s) with its gains,
   three cases: PD only, PD + feedforward(unified CV), PD + feedforward(two-step piecewise).
5. Timing: tau_ff compute time per cycle; the controller node's 1 kHz wall-timer jitter under
   :func:`legid_ros.ros.executor.spin`, as `run_node` deploys it.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Dict

import numpy as np

from legid_ros.bench import feedforward_floating
from legid_ros.bench.feedforward_report import write_floating_markdown, write_markdown
from legid_ros.core.feedforward import (GEARED_LEG_KD, GEARED_LEG_KP, FeedforwardModel,
                                        PdFeedforwardController, PdGains, from_identification,
                                        reflected_rotor_inertia)
from legid_ros.core.robot import load_robot
from legid_ros.core.sim.leg_closed_loop import (FourierTrajectory, LegSimConfig, PlantFriction,
                                                SampledTrajectory, run_tracking)

SWEEP_SPEEDS = (0.01, 0.02, 0.04, 0.07, 0.1, 0.15, 0.2, 0.3, 0.45, 0.7, 1.0, 1.5, 2.0, 3.0, 4.0,
                5.0)  # [rad/s], C's default levels: they cover the excitation's speeds
TARGETS = {'max_err_rad': 0.02, 'reduction_vs_pd': 0.80, 'reduction_vs_cv': 0.50,
           'tau_ff_us': 50.0, 'jitter_ms_p99': 0.5}


def add_arguments(parser) -> None:
    """Options of ``legid bench feedforward``."""
    parser.add_argument('--duration', type=float, default=60.0,
                        help='validation run length [s] (Xiao et al. 2025: 60)')
    parser.add_argument('--excitation', type=float, default=60.0,
                        help='excitation run length for identification [s]')
    parser.add_argument('--excitation-design', choices=('optimised', 'random'),
                        default='optimised', help='excitation: min-cond design or random Fourier')
    parser.add_argument('--sweep-reps', type=int, default=2,
                        help='repetitions of each sweep stroke')
    parser.add_argument('--jitter-s', type=float, default=10.0,
                        help='how long to run the controller node for the jitter figure [s]')
    parser.add_argument('--no-node', action='store_true', help='skip the node jitter run')
    parser.add_argument('--rt-priority', type=int, default=50,
                        help='also run the node jitter test under SCHED_FIFO at this priority '
                             '(if permitted; 0: normal scheduling only)')
    parser.add_argument('--gain-scale', type=float, default=1.0,
                        help='multiplies the published gains of the geared leg in the '
                        'validation runs (1: as published)')
    parser.add_argument('--biped', type=float, default=10.0,
                        help='biped swing-leg run length per case [s] (0: skip)')
    parser.add_argument('--seed', type=int, default=7, help='seed of the truth and the noise')
    parser.add_argument('--coulomb', choices=('applied', 'frictionloss'), default='applied',
                        help="plant's Coulomb friction: the generator's smooth law applied as a "
                             "force, or MuJoCo's constraint-based frictionloss (stiction)")
    parser.add_argument('--friction-scale', type=float, default=1.0,
                        help="multiplies the plant's true friction torques (description law)")
    feedforward_floating.add_arguments(parser)


def _log(msg: str) -> None:
    print(f'[bench feedforward] {msg}', file=sys.stderr, flush=True)


class _Periodic:
    """A periodic excitation (``FourierExcitation``) as a ``sample(t)`` trajectory."""

    def __init__(self, excitation):
        self.ex = excitation

    def sample(self, t) -> tuple:
        t_arr = np.mod(np.atleast_1d(np.asarray(t, float)), self.ex.period)
        q, qd, qdd = self.ex.evaluate(t_arr)
        return (q[0], qd[0], qdd[0]) if np.ndim(t) == 0 else (q, qd, qdd)


def identify_from_mujoco(robot, cfg: LegSimConfig, excitation_s: float, reps: int,
                         seed: int, design: str = 'optimised') -> Dict[str, object]:
    """Record sweeps and an excitation run on the MuJoCo leg and identify it both ways.

    ``design``: 'optimised' (condition-number design, Xiao et al. 2025) or 'random'.
    """
    from legid_ros.core.friction.fitting import fit_model
    from legid_ros.core.friction.models import JointFriction
    from legid_ros.core.friction.sweep import SweepPlan, extract_friction, sweep_trajectory
    from legid_ros.core.synthetic.leg import LegData, preprocess
    from legid_ros.core.synthetic.leg_experiment import design_excitation
    from legid_ros.core.identification.fixed_base import identify_two_step, leg_context, unified_cv

    names = robot.actuated_joint_names
    ident = robot.description.get('identification') or {}
    posture = np.asarray(ident.get('sweep_posture', [0.0, 0.3, 1.2]), float)
    cad_ff = FeedforwardModel(robot, rotor_inertia=reflected_rotor_inertia(robot))
    models, sweep_info = [], {}
    for j, name in enumerate(names):
        # 60 rad/s^2 ramps and 0.9 rad plateaus keep every stroke inside leg3's joint limits
        plan = SweepPlan(joint=j, posture=posture, speeds=SWEEP_SPEEDS, reps=reps, accel=60.0,
                         stroke_max=0.9, rate=1000.0)
        sw = sweep_trajectory(plan)
        traj = SampledTrajectory(sw.t, sw.q, sw.qd, sw.qdd)
        ctl = PdFeedforwardController.for_robot(robot, cad_ff)
        res = run_tracking(robot, ctl, traj, len(sw.t) / plan.rate, cfg, f'sweep {name}',
                           progress=sys.stderr.isatty())
        k = min(len(res.t), len(sw.t))
        sf = extract_friction(res.q[:k, j], res.qd[:k, j], res.tau[:k, j], sw.plateau[:k],
                              sw.direction[:k], name)
        fit = fit_model('piecewise', sf.speed, sf.tau_f, mirror=True)
        models.append(fit.model)
        sweep_info[name] = {'speeds_rad_s': sf.speed.tolist(), 'tau_f_nm': sf.tau_f.tolist(),
                            'fit_mse_nm2': fit.mse, 'v_th_rad_s': fit.info.get('v_th')}
        _log(f'sweep {name}: {len(sf.speed)} speeds, piecewise fit mse {fit.mse:.2e} N.m^2')
    friction = JointFriction(list(names), models)

    ctx = leg_context(robot)
    if design == 'optimised':
        t0 = time.perf_counter()
        opt = design_excitation(ctx, seed=seed)
        exc = _Periodic(opt.excitation)
        _log(f'excitation optimised (cond {opt.cond:.0f}) in {time.perf_counter() - t0:.0f} s')
    else:
        lo = robot.model.lowerPositionLimit
        hi = robot.model.upperPositionLimit
        exc = FourierTrajectory.random(
            0.5 * (lo + hi), 0.75 * 0.5 * (hi - lo) * np.array([0.8, 0.6, 0.6]),
            2 * np.pi / float(ident.get('excitation_period_s', 5.0)), 5,
            qd_max=[3.0, 3.0, 3.0], seed=seed)
    ctl = PdFeedforwardController.for_robot(robot, cad_ff)
    res = run_tracking(robot, ctl, exc, excitation_s, cfg, 'excitation',
                       progress=sys.stderr.isatty())
    data = LegData(t=res.t, q=res.q, tau=res.tau)
    q, qd, qdd, tau = preprocess(data, float(ident.get('filter_cutoff_hz', 7.5)), decimate=2)
    t0 = time.perf_counter()
    two = identify_two_step(ctx, q, qd, qdd, tau, friction)
    cv = unified_cv(ctx, q, qd, qdd, tau)
    _log(f'identified two-step and unified CV in {time.perf_counter() - t0:.1f} s')
    return {'two_step': two, 'cv': cv, 'sweeps': sweep_info,
            'excitation_samples': int(len(q))}


def biped_swing(duration_s: float, seed: int) -> Dict[str, object]:
    """The biped's left leg swinging (trunk fixed, right leg holding) in MuJoCo.

    Plant: the biped's URDF inertials, armature and friction of leg3's hip-flexion module on
    every joint (the biped description has no drive data). Feedforward: URDF rigid body +
    rotor inertia + a friction model fitted (:mod:`legid_ros.core.friction.fitting`) to the
    plant's friction at the sweep speeds: Coulomb-viscous or the piecewise model of Xiao et al.
    """
    from legid_ros.core.friction.fitting import fit_model
    from legid_ros.core.friction.models import JointFriction

    biped = load_robot('biped', floating_base=False)
    leg3 = load_robot('leg3', floating_base=False)
    names = biped.actuated_joint_names
    n = len(names)
    ref = PlantFriction.from_description(leg3)
    k = leg3.actuated_joint_names.index('hip_flex')
    law = PlantFriction(*(np.full(n, getattr(ref, a)[k]) for a in (
        'f_c', 'f_s', 'v_s', 'f_v', 'f_q', 'stribeck_exp', 'ripple', 'ripple_periods')),
        q_exp=ref.q_exp, v_eps=ref.v_eps)
    armature = np.full(n, reflected_rotor_inertia(leg3)[k])
    cfg = LegSimConfig(friction=law, armature=armature)
    posture = {'hip_pitch': -0.3, 'knee': 0.7, 'ankle_pitch': -0.4}
    amp = {'hip_pitch': 0.45, 'knee': 0.5, 'ankle_pitch': 0.3, 'hip_roll': 0.05,
           'ankle_roll': 0.05}
    q0 = np.array([posture.get(j[2:], 0.0) for j in names])
    a = np.array([amp.get(j[2:], 0.0) if j.startswith('l_') else 0.0 for j in names])
    traj = FourierTrajectory.random(q0, a, 2 * np.pi / 1.2, 3, qd_max=np.full(n, 3.0),
                                    seed=seed)
    v = np.array(SWEEP_SPEEDS)
    tau_f = law(np.tile(v[:, None], (1, n)), np.zeros((v.size, n)))[:, 0]
    fits = {kind: fit_model(kind, v, tau_f, mirror=True).model
            for kind in ('coulomb_viscous', 'piecewise')}
    cases = {'pd': None, 'cv': fits['coulomb_viscous'], 'two_step': fits['piecewise']}
    swing = [i for i, j in enumerate(names) if j.startswith('l_')]
    out: Dict[str, object] = {'joint_names': [names[i] for i in swing], 'max_err_rad': {}}
    for label, model in cases.items():
        ff = None if model is None else FeedforwardModel(
            biped, rotor_inertia=armature, friction=JointFriction(names, [model] * n))
        ctl = PdFeedforwardController.for_robot(biped, ff)
        res = run_tracking(biped, ctl, traj, duration_s, cfg, f'biped {label}',
                           progress=sys.stderr.isatty())
        mx = res.errors(skip_s=1.0)[0][swing]
        out['max_err_rad'][label] = dict(zip(out['joint_names'], mx.tolist()))
        _log(f'biped swing {label}: max error {np.round(mx, 5)} rad')
    return out


def _set_fifo(priority: int) -> bool:
    """SCHED_FIFO for this thread (and threads created later); False if not permitted."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
        return True
    except (AttributeError, PermissionError, OSError):
        return False


def node_jitter(seconds: float, rt_priority: int = 0) -> Dict[str, float]:
    """Run the controller node at 1 kHz with a joint state and a reference; timer jitter.

    With ``rt_priority`` > 0 the node runs under SCHED_FIFO at that priority (as a robot's
    control process would), restored to normal scheduling afterwards.
    """
    import rclpy
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from legid_ros.ros.controller_node import ControllerNode
    from legid_ros.ros.executor import make_executor, spin

    # FIFO before rclpy.init: the middleware threads inherit it, so the publishing path never
    # waits on a descheduled normal-priority thread (measured: p99 0.08-0.6 ms this way,
    # 0.6-0.7 ms with FIFO on the spinning thread only)
    rt = _set_fifo(rt_priority) if rt_priority > 0 else False
    rclpy.init()
    try:
        node = ControllerNode(namespace=f'legid_bench_{os.getpid()}',  # private topics
                              parameter_overrides=[Parameter('rate_hz', value=1000.0),
                                                   Parameter('state_timeout_s', value=1e9)])
        names = node.model_joints
        state = JointState(name=names, position=[0.0, 0.3, 1.2], velocity=[0.0] * 3)
        node._on_state(state)
        node._on_reference(JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(
            positions=[0.0, 0.3, 1.2], velocities=[0.0] * 3, accelerations=[0.0] * 3)]))
        ex = make_executor('auto')
        kind = type(ex).__name__
        # as deployed (run_node): the executor serves the timer in one long call, not one
        # spin_once per event from a Python loop (0.59-0.83 ms p99 that way on 2 cores)
        spin(node, ex, timeout_s=1.0)  # warm-up, not counted
        n0 = node.n_ticks
        spin(node, ex, timeout_s=seconds)
        jit = node.jitter_ms()[-(node.n_ticks - n0):]
        ticks = node.n_ticks - n0
        published = node.counts['published']
        ex.shutdown()
        node.destroy_node()
    finally:
        rclpy.shutdown()
        if rt:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    return {'executor': kind, 'sched_fifo_priority': rt_priority if rt else 0,
            'ticks': int(ticks), 'rate_hz': ticks / seconds, 'published': int(published),
            'loop_jitter_ms_p50': float(np.percentile(jit, 50)),
            'loop_jitter_ms_p99': float(np.percentile(jit, 99)),
            'loop_jitter_ms_max': float(jit.max())}


def node_jitter_process(seconds: float, rt_priority: int = 0) -> Dict[str, float]:
    """:func:`node_jitter` in a fresh process, as the node is deployed (small heap, own GIL)."""
    import json
    import subprocess

    code = ('import json; from legid_ros.bench.feedforward import node_jitter; '
            f'print("JITTER " + json.dumps(node_jitter({float(seconds)}, {int(rt_priority)})))')
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=120 + 2 * seconds)
    for line in proc.stdout.splitlines():
        if line.startswith('JITTER '):
            return json.loads(line[len('JITTER '):])
    raise RuntimeError(f'node jitter run failed: {proc.stderr.strip()[-500:]}')


def run_only_floating(args) -> dict:
    """``--only floating``: the standing-biped part alone.

    Its results replace the ``floating`` keys of ``<out>/feedforward.json`` when that file
    exists (the other keys are kept as they were, and ``feedforward.md`` is rewritten from
    the merged results), so the full results are not lost; they are also written alone to
    ``<out>/feedforward_floating.json`` and ``.md``.
    """
    import json

    part = feedforward_floating.run_floating(args)
    part['floating_meta']['command'] = 'legid bench feedforward --json --only floating' + ''.join(
        f' --{k.replace("_", "-")} {v}' for k, v, d in (
            ('floating_single', args.floating_single, 20.0),
            ('floating_ident', args.floating_ident, 'sdp'),
            ('floating_ident_s', args.floating_ident_s, 60.0)) if v != d) + (
        ' --floating-gains {:g} {:g}'.format(*args.floating_gains)
        if list(args.floating_gains) != [feedforward_floating.FLOATING_KP,
                                         feedforward_floating.FLOATING_KD] else '') + (
        ' --floating-measured' if args.floating_measured else '')
    out_dir = Path(getattr(args, 'out', 'bench'))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / 'feedforward_floating.json').write_text(json.dumps(part, indent=2,
                                                                  default=float))
    write_floating_markdown(part, out_dir / 'feedforward_floating.md')
    previous = out_dir / 'feedforward.json'
    out = json.loads(previous.read_text()) if previous.is_file() else {}
    out.update(part)
    if 'joint_names' in out and 'checks' in out:  # full results: refresh their report too
        write_markdown(out, out_dir / 'feedforward.md')
    return out


def run(args) -> dict:
    """Run the benchmark; results dict (also written to ``<out>/feedforward.md``)."""
    if getattr(args, 'only', 'all') == 'floating':
        return run_only_floating(args)
    t_start = time.perf_counter()
    robot = load_robot('leg3', floating_base=False)
    from legid_ros.core.synthetic.leg import make_truth
    truth = make_truth(robot, seed=args.seed)
    ident = robot.description.get('identification') or {}
    drive_gain = np.array([float(robot.description['joints'][j]['gear_ratio'])
                           * float(robot.description['joints'][j]['torque_constant_nm_per_a'])
                           for j in robot.actuated_joint_names])
    noise = float(ident.get('current_noise_a', 0.02)) * float(drive_gain.mean())
    plant_friction = PlantFriction.from_description(robot).scaled(args.friction_scale)
    plant_friction.coulomb = args.coulomb
    cfg_id = LegSimConfig(pi_true=truth.pi, armature=truth.drive.reflected_inertia,
                          friction=plant_friction, torque_noise_nm=noise, seed=args.seed)
    cfg = LegSimConfig(pi_true=truth.pi, armature=truth.drive.reflected_inertia,
                       friction=plant_friction)
    _log('recording identification data on the MuJoCo leg')
    idr = identify_from_mujoco(robot, cfg_id, args.excitation, args.sweep_reps, args.seed,
                               args.excitation_design)
    traj = FourierTrajectory.geared_leg_validation()
    cases = {'pd': None, 'cv': from_identification(robot, idr['cv']),
             'two_step': from_identification(robot, idr['two_step'])}
    names = robot.actuated_joint_names
    out: Dict[str, object] = {'joint_names': names, 'duration_s': args.duration,
                              'max_err_rad': {}, 'rms_err_rad': {}, 'saturated_cycles': {}}
    ff_us = []
    gains = PdGains(np.array(GEARED_LEG_KP) * args.gain_scale,
                    np.array(GEARED_LEG_KD) * args.gain_scale)
    out['gains'] = {'kp': gains.kp.tolist(), 'kd': gains.kd.tolist()}
    out['plant_friction'] = {'scale': args.friction_scale, 'coulomb': plant_friction.coulomb}
    for label, ff in cases.items():
        ctl = PdFeedforwardController.for_robot(robot, ff, gains=gains)
        t0 = time.perf_counter()
        res = run_tracking(robot, ctl, traj, args.duration, cfg, label,
                           progress=sys.stderr.isatty())
        mx, rms = res.errors(skip_s=1.0)
        out['max_err_rad'][label] = dict(zip(names, mx.tolist()))
        out['rms_err_rad'][label] = dict(zip(names, rms.tolist()))
        out['saturated_cycles'][label] = res.saturated_cycles
        if ff is not None:
            ff_us.append(res.ff_us)
        _log(f'{label}: max error {np.round(mx, 5)} rad ({time.perf_counter() - t0:.1f} s)')
    ff_all = np.concatenate(ff_us)
    out['tau_ff_us_median'] = float(np.median(ff_all))
    out['tau_ff_us_p99'] = float(np.percentile(ff_all, 99))
    mx = {k: np.array(list(v.values())) for k, v in out['max_err_rad'].items()}
    out['reduction_vs_pd'] = dict(zip(names, (1 - mx['two_step'] / mx['pd']).tolist()))
    out['reduction_vs_cv'] = dict(zip(names, (1 - mx['two_step'] / mx['cv']).tolist()))
    out['cv_reduction_vs_pd'] = dict(zip(names, (1 - mx['cv'] / mx['pd']).tolist()))
    out['identification'] = {
        k: {'residual_rms_nm': idr[k].meta.get('residual_rms_nm'),
            'consistent': bool(idr[k].consistent),
            'friction': idr[k].friction.params} for k in ('cv', 'two_step')}
    out['sweeps'] = idr['sweeps']
    if args.biped > 0:
        _log(f'biped swing leg, {args.biped:.0f} s per case')
        out['biped_swing'] = biped_swing(args.biped, args.seed)
    if not args.no_node:
        _log(f'controller node at 1 kHz for {args.jitter_s:.0f} s, normal scheduling')
        runs = [node_jitter_process(args.jitter_s, 0)]
        if args.rt_priority > 0:
            _log(f'controller node at 1 kHz for {args.jitter_s:.0f} s, SCHED_FIFO')
            runs.append(node_jitter_process(args.jitter_s, args.rt_priority))
        out['node_runs'] = runs
        # the figure: as deployed (SCHED_FIFO when permitted, like ros2_control's controller
        # manager), the normal-scheduling figure next to it
        best = runs[-1] if runs[-1]['sched_fifo_priority'] else runs[0]
        out['loop_jitter_ms_p50'] = best['loop_jitter_ms_p50']
        out['loop_jitter_ms_p99'] = best['loop_jitter_ms_p99']
        out['loop_jitter_ms_p99_normal_sched'] = runs[0]['loop_jitter_ms_p99']
    _log(f'standing biped (floating base), {args.floating_single:.0f} s single support')
    out.update(feedforward_floating.run_floating(args))
    checks = {
        'two_step_max_err': bool(np.all(mx['two_step'] <= TARGETS['max_err_rad'])),
        'reduction_vs_pd': bool(np.all(1 - mx['two_step'] / mx['pd']
                                       >= TARGETS['reduction_vs_pd'])),
        'reduction_vs_cv': bool(np.all(1 - mx['two_step'] / mx['cv']
                                       >= TARGETS['reduction_vs_cv'])),
        'tau_ff_us': out['tau_ff_us_median'] <= TARGETS['tau_ff_us'],
    }
    if 'loop_jitter_ms_p99' in out:
        checks['jitter'] = out['loop_jitter_ms_p99'] <= TARGETS['jitter_ms_p99']
    out['checks'] = checks
    out['passed'] = bool(all(checks.values()))
    out['wall_s'] = time.perf_counter() - t_start
    out['command'] = 'legid bench feedforward --json' + ''.join(
        f' --{k.replace("_", "-")} {getattr(args, k)}' for k, d in (
            ('duration', 60.0), ('excitation', 60.0), ('sweep_reps', 2), ('gain_scale', 1.0),
            ('friction_scale', 1.0), ('coulomb', 'applied'), ('biped', 10.0),
            ('rt_priority', 50), ('excitation_design', 'optimised'))
        if getattr(args, k) != d)
    write_markdown(out, Path(getattr(args, 'out', 'bench')) / 'feedforward.md')
    return out
