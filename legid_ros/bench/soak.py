"""``legid bench soak``: the simulated pipeline at 1 kHz for a long run; memory, CPU, drops.

sim, buffer, estimator, controller and ik run as separate processes (real rclpy, a private
localhost ROS domain) for ``--minutes`` minutes. Every ``--sample-s`` seconds the resident
memory (RSS) and CPU time of each node are read from /proc. This process listens to the joint
states and the buffer's windows. At the end every node gets SIGINT.

Figures: ``rss_growth_mb_max`` (largest RSS growth of any node after the first minute, or after
half the run when shorter), ``rss_growth_mb`` per node, ``rss_trend_mb_per_30min`` per node
and its largest, ``rss_trend_mb_per_30min_max`` (growth that persists through the run, per
half hour: the smallest of the RSS slopes of three equal parts of those samples, :func:`_trend`;
a steady leak shows in a 10-minute run, one-off allocator steps do not: an estimator leaking
0.6 MB a minute read 6.9 MB of growth in 10 minutes, which was taken for steps),
``cpu_pct`` per node, ``crashes``
(nodes that exited during the run, or exited non-zero or with a traceback on SIGINT) and
``drops`` (joint-state samples seen here that no window carried, up to one second before the
last window). Where they are lost: ``drop_runs`` (start [s after the first sample], length),
``listener_missed`` (samples this listener itself missed: drops are counted only among those
it saw) and ``node_diagnostics`` (the last /diagnostics values of the sim, the buffer and the
estimator: samples published, received, rows emitted, windows published, input events). The
sim streams only once the buffer, the controller and the listener subscribe
(``wait_for_subscribers``).
"""

from __future__ import annotations

import shutil
import signal
import tempfile
import time
from pathlib import Path

import numpy as np

from legid_ros.bench.node_procs import NodeProcess, bench_env, free_domain

#: Statuses of /diagnostics whose last values the result keeps (where samples are lost).
DIAGNOSTICS = ('legid buffer', 'legid sim', 'legid estimator')
#: Subscribers of joint_states the sim waits for before streaming: the buffer, the controller
#: and this bench's listener (so no sample is published before all of them listen).
LISTENERS = 3
#: Joint-state period of the sim [s]; larger steps between two samples the listener saw (but
#: shorter than the lap gap) are samples the listener itself missed.
PERIOD_S = 1e-3
#: Parts of the run after the first minute whose smallest RSS slope is the trend (_trend).
TREND_PARTS = 3


def add_arguments(parser) -> None:
    """Arguments of ``legid bench soak``."""
    parser.add_argument('--minutes', type=float, default=1.0,
                        help='length of the run [min] (default 1; the README figure: 30)')
    parser.add_argument('--sample-s', type=float, default=10.0,
                        help='period of the RSS/CPU samples [s] (default 10)')
    parser.add_argument('--domain', type=int, default=None,
                        help='ROS_DOMAIN_ID (default: a free one from the pid)')
    parser.add_argument('--keep', action='store_true', help='keep the logs')


def _nodes(work: Path, env) -> dict:
    return {
        'sim': NodeProcess('sim', {'duration_s': 30.0, 'loop': True, 'loop_gap_s': 0.2,
                                   'publish_forces': 'wrench', 'start_delay_s': 1.0,
                                   'wait_for_subscribers': LISTENERS}, env, work),
        'buffer': NodeProcess('buffer', {'force_sensing': 'wrench'}, env, work),
        'estimator': NodeProcess('estimator', {'force_sensing': 'wrench',
                                               'state_file': str(work / 'state.npz'),
                                               'output_dir': str(work / 'identified')},
                                 env, work),
        'controller': NodeProcess('controller', {'robot': 'biped'}, env, work),
        'ik': NodeProcess('ik', {}, env, work),
    }


def run(args) -> dict:
    """Run the soak; returns the figures and the samples."""
    import rclpy
    from rclpy.node import Node
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from legid_ros.ros import conversions as cv
    from legid_ros.ros.executor import make_executor
    from legid_ros.ros.node_util import sensor_qos

    domain = args.domain if args.domain is not None else free_domain(29)
    env = bench_env(domain)
    work = Path(tempfile.mkdtemp(prefix='legid_soak_'))
    nodes = _nodes(work, env)
    for proc in nodes.values():
        proc.start()
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain)
    listener = Node('legid_soak_listener', context=ctx)
    js_chunks, win_chunks, pending = [], [], []

    def on_js(msg):
        pending.append(cv.stamp_to_sec(msg.header.stamp))
        if len(pending) >= 10000:
            js_chunks.append(np.array(pending))
            pending.clear()

    def on_window(msg):
        win, _ = cv.window_from_msg(msg)
        win_chunks.append(win[:, 0].copy())

    def on_diag(msg):
        for name in DIAGNOSTICS:
            got = cv.diagnostic_values(msg, name)
            if got is not None:
                diags[name] = got[2]
    diags = {}
    listener.create_subscription(JointState, 'joint_states', on_js, sensor_qos(2000))
    listener.create_subscription(Float64MultiArray, 'legid/window', on_window, sensor_qos(100))
    listener.create_subscription(DiagnosticArray, '/diagnostics', on_diag, 100)
    ex = make_executor(context=ctx)
    ex.add_node(listener)
    duration = 60.0 * args.minutes
    samples = {name: [] for name in nodes}
    exited = {}
    try:
        start = time.monotonic()
        while not pending and time.monotonic() - start < 120.0:
            ex.spin_once(timeout_sec=0.05)
        if not pending:
            raise RuntimeError(f'no joint states from the sim (logs in {work})')
        cpu0 = {n: p.cpu_s() for n, p in nodes.items()}
        t0 = time.monotonic()
        next_sample = t0
        while time.monotonic() - t0 < duration:
            ex.spin_once(timeout_sec=0.05)
            now = time.monotonic()
            if now >= next_sample:
                next_sample += args.sample_s
                for name, proc in nodes.items():
                    samples[name].append((round(now - t0, 1), proc.rss_mb()))
                    if not proc.alive() and name not in exited:
                        exited[name] = proc.proc.returncode
        wall = time.monotonic() - t0
        cpu = {n: 100.0 * (p.cpu_s() - cpu0[n]) / wall for n, p in nodes.items()}
    finally:
        codes = {n: p.stop(signal.SIGINT) for n, p in nodes.items()}
        ex.shutdown(timeout_sec=1.0)
        listener.destroy_node()
        rclpy.shutdown(context=ctx)
    growth = {n: _growth(s, duration) for n, s in samples.items()}
    trend = {n: _trend(s, duration) for n, s in samples.items()}
    tracebacks = [n for n, p in nodes.items() if 'Traceback' in p.log_text()]
    crashes = len(set(exited) | {n for n, c in codes.items() if c != 0} | set(tracebacks))
    js = np.unique(np.concatenate(js_chunks + [np.array(pending)]))
    wins = np.concatenate(win_chunks) if win_chunks else np.zeros(0)
    horizon = wins.max() - 1.0 if wins.size else -np.inf
    checked = js[js <= horizon]
    lost = ~np.isin(checked, wins)
    drops = int(np.sum(lost))
    result = {
        'minutes': args.minutes,
        'rss_growth_mb_max': max(growth.values()),
        'crashes': crashes,
        'drops': drops,
        'rss_growth_mb': growth,
        'rss_trend_mb_per_30min_max': max(trend.values()),
        'rss_trend_mb_per_30min': trend,
        'cpu_pct': cpu,
        'joint_states_checked': int(checked.size),
        'listener_missed': _missed(js),
        'exit_codes_on_sigint': codes,
        'exited_during_run': exited,
        'tracebacks': tracebacks,
        'rss_samples_mb': samples,
        'windows_received': len(win_chunks),
        'drop_runs': _runs(checked, lost),
        'node_diagnostics': diags,
    }
    if args.keep:
        result['work_dir'] = str(work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return result


def _missed(stamps: np.ndarray, gap_s: float = 0.1) -> int:
    """Samples missing between consecutive stamps the listener saw (lap gaps excluded)."""
    d = np.diff(stamps)
    inner = d[(d > 1.5 * PERIOD_S) & (d < gap_s)]
    return int(np.sum(np.round(inner / PERIOD_S) - 1))


def _runs(stamps: np.ndarray, lost: np.ndarray, most: int = 20) -> list:
    """Runs of consecutive lost samples: ``[start [s after the first sample], count]``."""
    if not lost.any():
        return []
    idx = np.flatnonzero(lost)
    cut = np.flatnonzero(np.diff(idx) > 1) + 1
    return [[round(float(stamps[r[0]] - stamps[0]), 3), int(r.size)]
            for r in np.split(idx, cut)[:most]]


def _growth(series, duration_s: float) -> float:
    """RSS growth [MB] after the first minute (or half the run when shorter)."""
    settle = min(60.0, 0.5 * duration_s)
    after = [rss for t, rss in series if t >= settle and rss > 0]
    if len(after) < 2:
        return 0.0
    return float(max(after) - after[0])


def _trend(series, duration_s: float, parts: int = TREND_PARTS) -> float:
    """Growth that persists through the run [MB per 30 min]: the smallest of the least-squares
    RSS slopes of ``parts`` equal parts of the samples after the first minute (or half the run
    when shorter). A leak reads its rate in every part; one-off steps, or a creep early in the
    run and a step later, leave at least one part flat and read about 0. 0 with fewer than 3
    samples in a part."""
    settle = min(60.0, 0.5 * duration_s)
    pts = np.array([(t, rss) for t, rss in series if t >= settle and rss > 0], float)
    if len(pts) < 3 * parts:
        return 0.0
    chunks = np.array_split(pts, parts)
    slopes = [np.polyfit(p[:, 0], p[:, 1], 1)[0] for p in chunks if np.ptp(p[:, 0]) > 0]
    return float(min(slopes) * 1800.0) if len(slopes) == parts else 0.0
