"""``legid demo``: the whole pipeline on the simulated biped, as separate processes.

sim_node -> buffer_node -> estimator_node -> controller_node, plus ik_node, each its own
process started from ``.venv/bin`` with ``--ros-args --params-file config/legid.yaml``, on
localhost and a private ROS domain. A listener node in this process records the published
parameters, ZMPs and diagnostics; after ``--duration`` seconds of streaming the estimator is
asked to save (URDF + YAML), every node is stopped (SIGINT; SIGTERM, then SIGKILL for a node
still running after its budget; every one reaped), and a report (identified vs truth, ZMP
deviation, solve times, messages handled, how each node stopped) is printed and written with
PNG figures. The ROS domain is ``--domain``, else ``$ROS_DOMAIN_ID``, else one no other
process on this machine holds (:mod:`legid_ros.ros_domain`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

NODES = ['sim_node', 'buffer_node', 'estimator_node', 'controller_node', 'ik_node']
STOP_BUDGET_S = {signal.SIGINT: 30.0, signal.SIGTERM: 15.0, signal.SIGKILL: 15.0}  # [s]


def add_arguments(parser) -> None:
    """Arguments of ``legid demo``."""
    parser.add_argument('--duration', type=float, default=60.0,
                        help='streaming time [s] (default 60)')
    parser.add_argument('--patience', type=float, default=120.0,
                        help='when no parameter set is published after --duration, stream on '
                             'until one is, at most this long [s] (a busy machine streams '
                             'slower; default 120, 0: stop at --duration)')
    parser.add_argument('--out', default='demo_out', help='directory of the report and PNGs')
    parser.add_argument('--engine', default='synthetic', choices=['synthetic', 'mujoco'],
                        help='simulator of the sim node')
    parser.add_argument('--method', default='zmp_newton',
                        help='online identification method (default zmp_newton: Newton on the '
                             "robot's parameter set from its feet, grouped_sides with the ankle "
                             "wrenches, Wu & Gao 2021's reduced set with --forces fsr; the "
                             "swinging feet weighed by their ankle F/T)")
    parser.add_argument('--real-time-factor', type=float, default=1.0,
                        help='playback speed of the simulated run')
    parser.add_argument('--forces', default='wrench', choices=['wrench', 'fsr'],
                        help='foot force topics: 2 ankle wrenches (default; 4 topics at 1 kHz '
                             'in all) or 8 sole sensors (10 topics at 1 kHz)')
    parser.add_argument('--domain', type=int, default=None,
                        help='ROS_DOMAIN_ID (default: $ROS_DOMAIN_ID if set, else one no other '
                             'process on this machine holds)')
    parser.add_argument('--config', default=None, help='parameter file (default legid.yaml)')


def _available(exe: str) -> bool:
    return importlib.util.find_spec(f'legid_ros.ros.{exe}') is not None


def _start(exe, config, extra, env, log):
    cmd = [str(Path(sys.executable).parent / exe), '--ros-args', '--params-file', str(config)]
    for k, v in extra.items():
        cmd += ['-p', f'{k}:={v}']
    with open(log, 'w') as out:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def _domain(args):
    """(domain id, lease or None): --domain, else $ROS_DOMAIN_ID, else a locked private id."""
    from legid_ros.core.errors import BadInputError
    from legid_ros.ros_domain import acquire_domain

    if args.domain is not None:
        return args.domain, None
    text = os.environ.get('ROS_DOMAIN_ID', '').strip()
    if text:
        try:
            return int(text), None
        except ValueError:
            raise BadInputError(f'ROS_DOMAIN_ID={text!r} is not an integer') from None
    lease = acquire_domain()
    return lease.domain, lease


def run(args) -> int:
    """Run the demo; returns 0 when the pipeline produced parameters."""
    from legid_ros.core import paths
    from legid_ros.core.errors import BadInputError

    if args.duration <= 0:
        raise BadInputError('--duration must be positive')
    if not args.patience >= 0:
        raise BadInputError('--patience must be >= 0')
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    config = Path(args.config) if args.config else paths.config_path('legid.yaml')
    domain, lease = _domain(args)
    try:
        return _run(args, out, config, domain)
    finally:
        if lease is not None:
            lease.release()


def _run(args, out: Path, config: Path, domain: int) -> int:
    """Start the nodes on ``domain``, listen, stop them all, report."""
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               ROS_LOCALHOST_ONLY='1', MPLBACKEND='Agg')
    os.environ.update({k: env[k] for k in ('ROS_DOMAIN_ID', 'ROS_AUTOMATIC_DISCOVERY_RANGE',
                                           'ROS_LOCALHOST_ONLY')})
    state = out / 'estimator_state.npz'
    if state.exists():
        state.unlink()
    extra = {
        'sim_node': {'engine': args.engine, 'real_time_factor': args.real_time_factor,
                     'duration_s': max(20.0, min(args.duration, 60.0)), 'start_delay_s': 2.0,
                     'publish_forces': args.forces},
        'buffer_node': {'force_sensing': args.forces},
        'estimator_node': {'method': args.method, 'state_file': str(state),
                           'force_sensing': args.forces,
                           'output_dir': str(out / 'identified')},
    }
    print(f'legid demo: ROS domain {domain}, localhost only; logs and report in {out}')
    procs, missing = {}, []
    try:
        for exe in NODES:
            if not _available(exe):
                missing.append(exe)
                print(f'legid demo: {exe} is not in this build yet; running without it')
                continue
            procs[exe] = _start(exe, config, extra.get(exe, {}), env, out / f'{exe}.log')
        report = _listen(args, procs, out)
    finally:
        stopped_by = _stop(procs)
    report['missing_nodes'] = missing
    report['ros_domain'] = domain
    report['exit_codes'] = {k: p.returncode for k, p in procs.items()}
    report['stopped_by'] = stopped_by
    report['estimator_state_saved'] = state.is_file()
    _print_and_write(report, out)
    return 0 if report.get('parameters_published') else 1


def _listen(args, procs, out: Path) -> dict:
    import rclpy

    from legid_ros.ros.demo_listener import DemoListener
    from legid_ros.ros.executor import make_executor

    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    node = DemoListener(context=ctx)
    ex = make_executor(context=ctx)
    ex.add_node(node)
    try:
        deadline = time.monotonic() + 180.0
        print('legid demo: waiting for the simulator to compute its run ...', flush=True)
        while not node.zmp_measured and time.monotonic() < deadline:
            ex.spin_once(timeout_sec=0.1)
            dead = [k for k, p in procs.items() if p.poll() is not None]
            if dead:
                raise RuntimeError(f'{dead} exited early; see {out}/<node>.log')
        if not node.zmp_measured:
            raise RuntimeError(f'no measured ZMP after 180 s; see the logs in {out}')
        start = time.monotonic()
        next_print = start
        extended = False
        while True:
            elapsed = time.monotonic() - start
            if elapsed >= args.duration and (node.params or
                                              elapsed >= args.duration + args.patience):
                break
            if elapsed >= args.duration and not extended:
                extended = True
                print(f'legid demo: no parameter set after {args.duration:.0f} s; streaming '
                      f'on until one is published (at most {args.patience:.0f} s more)',
                      flush=True)
            ex.spin_once(timeout_sec=0.1)
            if time.monotonic() >= next_print:
                next_print += 10.0
                _progress(node, time.monotonic() - start, args.duration)
        streamed = time.monotonic() - start
        saved = ''
        if node.save_client.wait_for_service(timeout_sec=5.0):
            from std_srvs.srv import Trigger
            future = node.save_client.call_async(Trigger.Request())
            end = time.monotonic() + 20.0
            while not future.done() and time.monotonic() < end:
                ex.spin_once(timeout_sec=0.1)
            if future.done() and future.result() is not None:
                saved = future.result().message
        report = _report(node, args, out, saved)
        report['streamed_s'] = streamed
        return report
    finally:
        ex.shutdown(timeout_sec=1.0)
        node.destroy_node()
        rclpy.shutdown(context=ctx)


def _progress(node, elapsed, total):
    est = node.diagnostics.get('legid estimator', (0, '', {}))[2]
    print(f'legid demo: {elapsed:5.1f}/{total:.0f} s  windows {node.counts["windows"]}  '
          f'samples folded {est.get("samples_folded", 0)}  '
          f'parameter sets {node.counts["parameters"]}', flush=True)


def _report(node, args, out, saved) -> dict:
    from legid_ros.core.inertial import get_parameters
    from legid_ros.demo.report import group_masses, mass_table, write_figures
    from legid_ros.core.robot import load_robot

    robot = load_robot('biped')
    cad = get_parameters(robot.model)
    truth = node.truth[0] if node.truth is not None else None
    ident = node.params[-1][1] if node.params else None
    zt, dev = node.zmp_deviation()
    n = len(dev)
    early = float(np.mean(dev[:max(n // 5, 1)])) if n else float('nan')
    late = float(np.mean(dev[-max(n // 5, 1):])) if n else float('nan')
    figures = write_figures(out, robot, node.params, cad, truth, zt, dev, node.solve_ms)
    diag = {k: v[2] for k, v in node.diagnostics.items()}
    return {
        'duration_s': args.duration, 'engine': args.engine, 'method': args.method,
        'parameters_published': len(node.params),
        'mass_table': mass_table(robot, cad, truth, ident),
        'masses_identified': group_masses(ident, robot) if ident is not None else None,
        'masses_truth': group_masses(truth, robot) if truth is not None else None,
        'masses_cad': group_masses(cad, robot),
        'zmp_deviation_mm': {'mean': 1000 * float(np.mean(dev)) if n else None,
                             'first_fifth_mean': 1000 * early, 'last_fifth_mean': 1000 * late,
                             'samples': n},
        'solve_time_ms': {'mean': float(np.mean(node.solve_ms)) if node.solve_ms else None,
                          'max': float(np.max(node.solve_ms)) if node.solve_ms else None,
                          'updates': len(node.solve_ms), **_cpu_ms(node.solve_cpu_ms)},
        'messages': {'listener': dict(node.counts), 'buffer': diag.get('legid buffer', {}),
                     'estimator': diag.get('legid estimator', {}),
                     'sim': diag.get('legid sim', {})},
        'saved': saved, 'figures': [str(p) for p in figures],
    }


def _cpu_ms(values) -> dict:
    """Mean and max of the estimator's update CPU times [ms] (none when not reported)."""
    v = np.asarray([x for x in values if np.isfinite(x)], float)
    return {'cpu_mean': float(v.mean()), 'cpu_max': float(v.max())} if v.size else {}


def _stop(procs, budget_s=None) -> dict:
    """Stop and reap every process: SIGINT to all, then SIGTERM to those still running after
    their budget [s], then SIGKILL. Returns the name of the signal that stopped each one (''
    if it had exited already, 'unreaped' if it outlived even SIGKILL's budget)."""
    budget_s = budget_s or STOP_BUDGET_S
    by = {k: '' for k, p in procs.items() if p.poll() is not None}
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        running = {k: p for k, p in procs.items() if k not in by}
        if not running:
            break
        for p in running.values():
            if p.poll() is None:
                p.send_signal(sig)
        end = time.monotonic() + budget_s[sig]
        for k, p in running.items():
            try:
                p.wait(timeout=max(end - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                continue
            by[k] = _signal_name(sig)
        if sig != signal.SIGKILL and len(by) < len(procs):
            print(f'legid demo: {", ".join(k for k in procs if k not in by)} still running '
                  f'{budget_s[sig]:.0f} s after {_signal_name(sig)}', flush=True)
    for k in procs:
        by.setdefault(k, 'unreaped')
    return by


def _signal_name(sig) -> str:
    return signal.Signals(sig).name


def _print_and_write(report: dict, out: Path) -> None:
    lines = ['', '=== legid demo report ===',
             f"{report.get('streamed_s', report['duration_s']):.0f} s of {report['engine']} "
             'biped data, '
             f"method {report['method']}, {report['parameters_published']} parameter sets "
             'published', '']
    lines += report['mass_table'] + ['']
    z = report['zmp_deviation_mm']
    if z['samples']:
        lines.append(f"ZMP deviation |measured - predicted|: mean {z['mean']:.2f} mm "
                     f"(first fifth {z['first_fifth_mean']:.2f} mm, last fifth "
                     f"{z['last_fifth_mean']:.2f} mm, {z['samples']} samples)")
    s = report['solve_time_ms']
    if s['updates']:
        cpu = (f" (CPU of the estimator's thread: mean {s['cpu_mean']:.2f} ms, max "
               f"{s['cpu_max']:.2f} ms; the rest is waiting for a core)"
               if s.get('cpu_mean') is not None else '')
        lines.append(f"estimator solve time: mean {s['mean']:.2f} ms, max {s['max']:.2f} ms "
                     f"over {s['updates']} updates{cpu}")
    m = report['messages']
    b, e = m['buffer'], m['estimator']
    lines.append(f"messages: buffer received {b.get('received.joint_states', '?')} joint "
                 f"states, {b.get('received.imu', '?')} IMU, {b.get('received.force', '?')} "
                 f"force; {b.get('rows_emitted', '?')} rows in {b.get('windows_published', '?')}"
                 f" windows; estimator folded {e.get('samples_folded', '?')} samples in "
                 f"{e.get('updates', '?')} updates; listener saw {m['listener']}")
    unusual = {k: v for k, v in report['stopped_by'].items() if v not in ('', 'SIGINT')}
    if unusual:
        lines.append('stopped only by: ' + ', '.join(f'{k} {v}' for k, v in unusual.items()))
    if report['missing_nodes']:
        lines.append(f"not run (not in this build): {', '.join(report['missing_nodes'])}")
    lines.append(f"saved: {report['saved'] or 'nothing'}")
    lines.append('figures: ' + ', '.join(report['figures']))
    text = '\n'.join(lines)
    print(text)
    (out / 'demo_report.txt').write_text(text + '\n')
    (out / 'demo_report.json').write_text(json.dumps(report, indent=2, default=float))
