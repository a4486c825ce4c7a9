"""``legid bench fuzz``: malformed input, service storms and kills against the running pipeline.

The buffer, estimator and controller run as separate processes (real rclpy, a private
localhost ROS domain). This process publishes a good biped stream (joint states, IMU, foot
wrenches at 1 kHz stamps) and, between stretches of it, one fuzz case at a time: NaN/inf in
every field of every input type, empty and mismatched arrays, unknown/reordered/10 000 joints,
1 MB names, stamps zero/backwards/duplicated/year 2100, a burst of 5 000 messages, wrong
frame ids, garbage windows, parameters and references, storms on ``~/save``/``~/reset``,
SIGKILL of each node and restart, SIGKILL of the estimator during saves, a truncated state file
and a description whose robot name climbs out of ``output_dir``. After every case the good
stream must again give windows (buffer), folded windows (estimator) and commands (controller).
Last, ``--shutdown-cycles`` times, the five nodes are started and stopped with SIGINT.

Figures: ``cases``; ``nodes_lost`` (node processes found dead, or silent after a case, without
being killed on purpose); ``nonfinite_outputs`` (NaN/inf in any published parameter set,
command, feedforward or ZMP); ``state_restored_after_kill_pct`` (the estimator, killed with
SIGKILL during a storm of ``~/save`` calls, restores its state on restart);
``files_outside_output_dir``; ``shutdown_unclean`` (cycles with an exit code other than 0, a
traceback or fatal callback error in a log, or no saved estimator state).
"""

from __future__ import annotations

import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List

import numpy as np

from legid_ros.bench.fuzz.cases import CASES
from legid_ros.bench.fuzz.client import FuzzClient
from legid_ros.bench.node_procs import NodeProcess, bench_env, free_domain


def add_arguments(parser) -> None:
    """Arguments of ``legid bench fuzz``."""
    parser.add_argument('--kill-trials', type=int, default=5,
                        help='SIGKILLs of the estimator during saves (default 5)')
    parser.add_argument('--domain', type=int, default=None,
                        help='ROS_DOMAIN_ID (default: a free one from the pid)')
    parser.add_argument('--shutdown-cycles', type=int, default=20,
                        help='start/SIGINT cycles of the five nodes (default 20; 0: skip)')
    parser.add_argument('--keep', action='store_true', help='keep the work directory (logs)')


def _pipeline(work: Path, env) -> Dict[str, NodeProcess]:
    state = work / 'state' / 'estimator_state.npz'
    out = work / 'identified'
    return {
        'buffer': NodeProcess('buffer', {'force_sensing': 'wrench', 'window_length': 200,
                                         'window_hop': 100, 'diagnostics_period_s': 0.5,
                                         'queue_depth': 6000}, env, work),
        'estimator': NodeProcess('estimator', {
            'force_sensing': 'wrench', 'min_samples': 200, 'update_period_s': 0.3,
            'diagnostics_period_s': 0.25, 'state_file': str(state), 'output_dir': str(out),
            'publish_markers': False}, env, work),
        'controller': NodeProcess('controller', {'robot': 'biped', 'state_timeout_s': 2.0,
                                                 'rate_hz': 200.0,
                                                 'diagnostics_period_s': 0.5}, env, work),
    }


def run(args) -> dict:
    """Run every case; returns the figures and the per-case outcomes."""
    import rclpy

    domain = args.domain if args.domain is not None else free_domain(17)
    env = bench_env(domain)
    work = Path(tempfile.mkdtemp(prefix='legid_fuzz_'))
    nodes = _pipeline(work, env)
    for node in nodes.values():
        node.start()
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain)
    client = FuzzClient(ctx, nodes, work)
    outcomes: List[dict] = []
    try:
        if not client.wait_ready(180.0):
            raise RuntimeError(f'pipeline did not start; logs in {work}')
        client.warm_up()
        for name, case in CASES:
            outcomes.append(_run_case(client, name, case))
        restored = [_kill_during_save(client, k) for k in range(max(args.kill_trials, 0))]
        outcomes += restored
        outcomes.append(_run_case(client, 'truncated_state_file', _truncated_state))
        outcomes.append(_run_case(client, 'robot_name_outside_output_dir', _escaping_name))
    finally:
        client.close()
        rclpy.shutdown(context=ctx)
        codes = {n: p.stop(signal.SIGINT) for n, p in nodes.items()}
        for p in client.extra:
            p.stop(signal.SIGINT)
    cycles = shutdown_cycles(args.shutdown_cycles, free_domain(41), work / 'shutdown')
    kills = [o for o in outcomes if o['case'].startswith('sigkill_estimator_during_save')]
    result = {
        'cases': len(outcomes),
        'nodes_lost': client.lost,
        'nonfinite_outputs': client.nonfinite,
        'state_restored_after_kill_pct': (100.0 * sum(o['restored'] for o in kills) / len(kills)
                                          if kills else None),
        'files_outside_output_dir': client.files_outside,
        'shutdown_cycles': cycles['cycles'],
        'shutdown_unclean': cycles['unclean'],
        'cases_failed': [o['case'] for o in outcomes if not o['ok']],
        'exit_codes_on_sigint': codes,
        'outputs_checked': dict(client.outputs),
        'outcomes': outcomes,
        'shutdown': cycles,
    }
    if args.keep:
        result['work_dir'] = str(work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return result


def shutdown_cycles(n: int, domain: int, work: Path) -> dict:
    """``n`` cycles: start sim, buffer, estimator, controller and ik, wait until each spins,
    SIGINT all; a cycle is unclean if any exit code is not 0, a log holds a traceback or a
    fatal callback error, or the estimator's state was not saved."""
    import rclpy

    work.mkdir(parents=True, exist_ok=True)
    env = bench_env(domain)
    state = work / 'state.npz'
    params = {'sim': {'duration_s': 3.0, 'start_delay_s': 0.0},
              'buffer': {'force_sensing': 'fsr'},
              'estimator': {'state_file': str(state), 'min_samples': 100,
                            'update_period_s': 0.2},
              'controller': {'robot': 'leg3'}, 'ik': {}}
    unclean, details = 0, []
    for cycle in range(max(n, 0)):
        cdir = work / f'cycle_{cycle}'
        cdir.mkdir()
        if state.exists():
            state.unlink()
        procs = {name: NodeProcess(name, p, env, cdir).start() for name, p in params.items()}
        ctx = rclpy.Context()
        rclpy.init(context=ctx, domain_id=domain)
        try:
            ready = _spinning(ctx, list(procs), 120.0)
        finally:
            rclpy.shutdown(context=ctx)
            codes = {name: p.stop(signal.SIGINT, 60.0) for name, p in procs.items()}
        bad_logs = [name for name, p in procs.items() if any(
            k in p.log_text() for k in ('Traceback', '[FATAL]', 'context is invalid'))]
        ok = ready and all(c == 0 for c in codes.values()) and not bad_logs and state.is_file()
        unclean += not ok
        details.append({'cycle': cycle, 'ready': ready, 'exit_codes': codes,
                        'logs_with_errors': bad_logs, 'state_saved': state.is_file()})
    return {'cycles': max(n, 0), 'unclean': unclean, 'details': details}


def _spinning(ctx, names, timeout_s: float) -> bool:
    """Whether every node answered get_parameters within ``timeout_s`` [s] (retried every 2 s:
    a reply can be lost before the server's reply writer matched)."""
    from rcl_interfaces.srv import GetParameters
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    node = Node('legid_fuzz_probe', context=ctx)
    ex = SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    clients = {n: node.create_client(GetParameters, f'/{n}/get_parameters') for n in names}
    sent, done = {}, set()
    end = time.monotonic() + timeout_s
    try:
        while len(done) < len(names) and time.monotonic() < end:
            now = time.monotonic()
            for n in names:
                fut, at = sent.get(n, (None, -1e9))
                if fut is not None and fut.done():
                    done.add(n)
                elif n not in done and now - at > 2.0 and clients[n].service_is_ready():
                    sent[n] = (clients[n].call_async(GetParameters.Request(names=['robot'])),
                               now)
            ex.spin_once(timeout_sec=0.05)
        return len(done) == len(names)
    finally:
        ex.shutdown(timeout_sec=1.0)
        node.destroy_node()


def _run_case(client: FuzzClient, name: str, case: Callable) -> dict:
    """One case, then the good stream; the case passes when every node is still working."""
    t0 = time.monotonic()
    detail = case(client) or {}
    alive = client.check_alive(name)
    return {'case': name, 'ok': all(alive.values()), 'alive': alive,
            'wall_s': round(time.monotonic() - t0, 2), **detail}


def _kill_during_save(client: FuzzClient, trial: int) -> dict:
    """SIGKILL the estimator while ~/save calls are in flight; restart; restored?"""
    est = client.nodes['estimator']
    client.call_many('/estimator/save', 1)  # a state exists before the storm
    futures = client.call_async_many('/estimator/save', 10)
    client.spin_until(lambda: sum(f.done() for f in futures) >= 1 + trial % 5, 10.0)
    est.kill()
    seen = client.est_diags  # the killed process publishes nothing more
    est.start()
    client.forget_clients('estimator')
    ok = client.wait_ready(120.0, names=['estimator'])
    ok = ok and client.spin_until(lambda: client.est_diags > seen, 20.0)
    restored = ok and client.est_status().get('restored') == 'True'
    alive = client.check_alive(f'sigkill_estimator_during_save_{trial}')
    return {'case': f'sigkill_estimator_during_save_{trial}', 'ok': bool(restored)
            and all(alive.values()), 'restored': bool(restored), 'alive': alive}


def _truncated_state(client: FuzzClient) -> dict:
    """Kill the estimator, cut its state file in half, restart: it starts fresh."""
    est = client.nodes['estimator']
    client.call_many('/estimator/save', 1)
    est.kill()
    path = Path(est.params['state_file'])
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])
    est.start()
    client.forget_clients('estimator')
    client.wait_ready(120.0, names=['estimator'])
    aside = sorted(p.name for p in path.parent.glob(path.name + '.corrupt-*'))
    return {'moved_aside': aside}


def _escaping_name(client: FuzzClient) -> dict:
    """An estimator on a description named ``../../escaped`` saves; count files that land
    outside its output_dir."""
    import yaml

    from legid_ros.core import paths

    sandbox = client.work / 'escape' / 'a' / 'b'
    sandbox.mkdir(parents=True)
    desc = yaml.safe_load(paths.config_path('biped.yaml').read_text())
    desc['robot'] = '../../escaped'
    desc['urdf'] = str(paths.urdf_path('biped.urdf'))
    ypath = sandbox / 'escaped.yaml'
    ypath.write_text(yaml.safe_dump(desc))
    out = sandbox / 'out'
    state = sandbox / 'state.npz'
    proc = NodeProcess('estimator', {'robot': str(ypath), 'output_dir': str(out),
                                     'state_file': str(state), 'force_sensing': 'wrench',
                                     'min_samples': 200, 'update_period_s': 0.3,
                                     'publish_markers': False}, client.env, client.work,
                       remap_name='fuzz_escape').start()
    client.extra.append(proc)
    client.wait_ready(120.0, names=['fuzz_escape'])
    saved = {}
    for _ in range(3):
        client.publish_good(1500)
        saved = client.call_many('/fuzz_escape/save', 1)[0]
        if 'identified' in saved.get('message', ''):
            break
    proc.stop(signal.SIGINT)
    allowed = {ypath, state}
    root = client.work / 'escape'
    outside = [p for p in root.rglob('*') if p.is_file() and p not in allowed
               and out not in p.parents and '.corrupt-' not in p.name]
    client.files_outside += len(outside)
    return {'saved': saved.get('message', '')[:300],
            'outside': [str(p.relative_to(root)) for p in outside],
            'identified_written': sorted(p.name for p in out.glob('*'))
            if out.is_dir() else []}


def finite(values) -> bool:
    """Whether every number is finite."""
    arr = np.asarray(values, float)
    return bool(np.all(np.isfinite(arr))) if arr.size else True

