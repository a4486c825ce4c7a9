"""``legid bench pipeline``: buffer throughput, CPU and latency at 1 kHz; estimator update cost.

Part 1 (separate processes, real rclpy, localhost, a private ROS domain): ``sim_node`` streams
joint states, IMU and the two foot wrenches at 1 kHz in real time (4000 messages/s) for
``--duration`` seconds into ``buffer_node`` (the figure); then, for ``--ankle-ft-duration``
seconds, the same plus the two raw ankle F/T topics (6000 messages/s, reported); this process
listens to ``joint_states`` and ``legid/window``. Figures: joint-state samples missing from every
window (drops), the buffer's CPU time over the run (% of one core, from /proc), and the
sample-to-window latency (receipt of a window minus the receipt, in this process, of the joint
state of its newest row; the oldest rows of a window waited up to one hop longer).

Part 2 (in-process): the estimator's update time (fold a window + solve) after 10 s and after
600 s of history; the online form keeps sufficient statistics, so the ratio should be ~1.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def add_arguments(parser) -> None:
    """Arguments of ``legid bench pipeline``."""
    parser.add_argument('--duration', type=float, default=60.0,
                        help='streaming time of the buffer test [s] (default 60)')
    parser.add_argument('--quick', action='store_true',
                        help='10 s buffer run and 60 s of estimator history (smoke test)')
    parser.add_argument('--ankle-ft-duration', type=float, default=30.0,
                        help='second buffer run with the raw ankle F/T topics too [s] '
                             '(0: skip)')
    parser.add_argument('--skip-estimator', action='store_true',
                        help='only the buffer part')
    parser.add_argument('--domain', type=int, default=None,
                        help='ROS_DOMAIN_ID for the run (default: a free one from the pid)')


def _cpu_seconds(pid: int) -> float:
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def _node_cmd(exe: str, params: dict):
    bindir = Path(sys.executable).parent
    cmd = [str(bindir / exe), '--ros-args']
    for k, v in params.items():
        cmd += ['-p', f'{k}:={v}']
    return cmd


def buffer_throughput(duration_s: float, domain: int, ankle_ft: bool = False) -> dict:
    """Run sim -> buffer for ``duration_s`` [s] from the buffer's first window on; drops (over
    the whole run), CPU % (steady state), latency.

    ``ankle_ft``: the simulator also publishes the raw ankle F/T topics (the buffer subscribes
    to them by default).
    """
    import rclpy
    from rclpy.node import Node
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from legid_ros.ros import conversions as cv
    from legid_ros.ros.executor import make_executor
    from legid_ros.ros.node_util import sensor_qos

    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               ROS_LOCALHOST_ONLY='1')
    os.environ.update({k: env[k] for k in ('ROS_DOMAIN_ID', 'ROS_AUTOMATIC_DISCOVERY_RANGE',
                                           'ROS_LOCALHOST_ONLY')})
    logdir = Path(tempfile.mkdtemp(prefix='legid_bench_'))
    buf = subprocess.Popen(_node_cmd('buffer_node', {'force_sensing': 'wrench'}), env=env,
                           stdout=open(logdir / 'buffer.log', 'w'), stderr=subprocess.STDOUT)
    sim = subprocess.Popen(_node_cmd('sim_node', {
        'duration_s': 30.0, 'loop': True, 'loop_gap_s': 0.2, 'publish_forces': 'wrench',
        'publish_ankle_ft': ankle_ft, 'start_delay_s': 4.0,
        'noise': 'default'}), env=env, stdout=open(logdir / 'sim.log', 'w'),
        stderr=subprocess.STDOUT)
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    node = Node('legid_bench_listener', context=ctx)
    js_stamps, win_stamps, latency = [], set(), []
    received = {}

    def on_js(msg):
        t = cv.stamp_to_sec(msg.header.stamp)
        js_stamps.append(t)
        received[t] = time.monotonic()

    def on_window(msg):
        now = time.monotonic()
        win, schema = cv.window_from_msg(msg)
        win_stamps.update(win[:, 0].tolist())
        got = received.get(win[-1, 0])
        if got is not None:
            latency.append(now - got)
    node.create_subscription(JointState, 'joint_states', on_js, sensor_qos(2000))
    node.create_subscription(Float64MultiArray, 'legid/window', on_window, 100)
    ex = make_executor(context=ctx)
    ex.add_node(node)
    try:
        t_start = time.monotonic()
        while not js_stamps and time.monotonic() - t_start < 60:
            ex.spin_once(timeout_sec=0.05)
        if not js_stamps:
            raise RuntimeError(f'no joint states from sim_node (logs in {logdir})')
        # the buffer's CPU is counted from its first window on: a node still importing when
        # the simulator starts would otherwise add its start-up to the per-message cost
        while not latency and time.monotonic() - t_start < 90:
            ex.spin_once(timeout_sec=0.05)
        cpu0, wall0 = _cpu_seconds(buf.pid), time.monotonic()
        while time.monotonic() - wall0 < duration_s:
            ex.spin_once(timeout_sec=0.05)
        cpu1, wall1 = _cpu_seconds(buf.pid), time.monotonic()
        sim.send_signal(signal.SIGINT)
        end = time.monotonic() + 5.0
        while time.monotonic() < end:
            ex.spin_once(timeout_sec=0.05)
    finally:
        for proc in (sim, buf):
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in (sim, buf):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        ex.shutdown(timeout_sec=1.0)
        node.destroy_node()
        rclpy.shutdown(context=ctx)
    js = np.unique(js_stamps)
    in_windows = np.isin(js, np.fromiter(win_stamps, float, len(win_stamps)))
    lat = np.array(latency) * 1000.0
    span = float(js[-1] - js[0]) if js.size > 1 else 0.0
    return {
        'duration_s': duration_s,
        'joint_states_seen': int(js.size),
        'joint_state_rate_hz': float((js.size - 1) / span) if span > 0 else 0.0,
        'drops': int(np.sum(~in_windows)),
        'buffer_cpu_pct': float(100.0 * (cpu1 - cpu0) / (wall1 - wall0)),
        'latency_ms_p50': float(np.percentile(lat, 50)) if lat.size else float('nan'),
        'latency_ms_p99': float(np.percentile(lat, 99)) if lat.size else float('nan'),
        'windows': len(latency),
        'logs': str(logdir),
    }


def run(args) -> dict:
    """Both parts; ``passed`` says whether the issue's figures were reached."""
    duration = 10.0 if args.quick else args.duration
    from legid_ros.bench.node_procs import free_domain
    domain = args.domain if args.domain is not None else free_domain()
    out = {'buffer': buffer_throughput(duration, domain)}
    b = out['buffer']
    out.update({'drops': b['drops'], 'buffer_cpu_pct': b['buffer_cpu_pct'],
                'latency_ms_p50': b['latency_ms_p50'], 'latency_ms_p99': b['latency_ms_p99']})
    passed = b['drops'] == 0 and b['buffer_cpu_pct'] <= 30.0 and b['joint_states_seen'] > 0
    if args.ankle_ft_duration > 0 and not args.quick:
        a = buffer_throughput(args.ankle_ft_duration, domain, ankle_ft=True)
        out['buffer_ankle_ft'] = a  # reported: the load has no raw ankle topics
        out.update({'drops_with_ankle_ft': a['drops'],
                    'buffer_cpu_pct_with_ankle_ft': a['buffer_cpu_pct']})
    if not args.skip_estimator:
        from legid_ros.bench.pipeline_estimator import update_times
        est = update_times(60.0 if args.quick else 600.0)
        out['estimator'] = est
        out['update_ratio_600s_vs_10s'] = est['ratio']
        passed = passed and est['ratio'] <= 1.2
    out['passed'] = bool(passed)
    return out
