"""Helpers of the process-level node tests: start console-script nodes on a private ROS domain,
wait until each one answers a service (so it is spinning), stop them with a signal and reap
them (a process still running after the deadline is killed and reaped, exit code -9)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence

import rclpy
from rcl_interfaces.srv import GetParameters

BIN = Path(sys.executable).parent
NODE_NAMES = {'sim_node': 'sim', 'buffer_node': 'buffer', 'estimator_node': 'estimator',
              'controller_node': 'controller', 'ik_node': 'ik'}


def fresh_domain() -> int:
    """A ROS domain id of its own (locked, held until the test session ends), for a test whose
    nodes must not meet the session's other nodes."""
    from legid_ros.ros_domain import hold_domain

    return hold_domain()


def node_env(domain: int) -> Dict[str, str]:
    """Environment of a private, localhost-only ROS domain."""
    return dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
                ROS_LOCALHOST_ONLY='1', OPENBLAS_NUM_THREADS='1', PYTHONUNBUFFERED='1')


def start(exe: str, params: Dict[str, object], env: Dict[str, str], log_dir: Path,
          ros_args: Sequence[str] = ()) -> subprocess.Popen:
    """Start console script ``exe`` with ``-p name:=value`` overrides and further ROS
    arguments (e.g. ``-r __ns:=/robot1``); stderr to a log file."""
    args = [str(BIN / exe), '--ros-args']
    for k, v in params.items():
        value = str(v).lower() if isinstance(v, bool) else str(v)
        args += ['-p', f'{k}:={value}']
    args += list(ros_args)
    with open(log_dir / f'{exe}.err', 'w') as err:  # the child keeps its own descriptor
        return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err, env=env)


def wait_spinning(names: Sequence[str], domain: int, procs: Dict[str, subprocess.Popen],
                  timeout_s: float = 120.0) -> List[str]:
    """Wait until every node in ``names`` answers its get_parameters service (it is then
    past start-up and spinning); returns the names that never answered. A request is resent
    every 2 s: DDS loses a reply sent before the server's reply writer matched this client."""
    from rclpy.executors import SingleThreadedExecutor

    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain)
    node = rclpy.create_node('legid_test_prober', context=ctx)
    ex = SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    waiting = list(names)
    try:
        end = time.monotonic() + timeout_s
        clients = {n: node.create_client(GetParameters, f'/{n}/get_parameters') for n in names}
        sent = {}
        while waiting and time.monotonic() < end:
            if any(p.poll() is not None for p in procs.values()):
                break
            now = time.monotonic()
            for n in list(waiting):
                fut, at = sent.get(n, (None, -1e9))
                if fut is not None and fut.done():
                    waiting.remove(n)
                elif now - at > 2.0 and clients[n].service_is_ready():
                    sent[n] = (clients[n].call_async(GetParameters.Request(names=['robot'])),
                               now)
            ex.spin_once(timeout_sec=0.05)
        return waiting
    finally:
        ex.shutdown(timeout_sec=1.0)
        node.destroy_node()
        rclpy.shutdown(context=ctx)


def stop(procs: Dict[str, subprocess.Popen], sig: int = signal.SIGINT,
         timeout_s: float = 60.0) -> Dict[str, int]:
    """Send ``sig`` to every process, wait for each (``timeout_s`` [s]); a process still
    running then is killed; every one is reaped. Returns the exit codes (killed: -9): no
    SIGTERM in between, so a node that ignores ``sig`` shows as -9, not as a clean exit."""
    for p in procs.values():
        if p.poll() is None:
            p.send_signal(sig)
    codes = {}
    for name, p in procs.items():
        try:
            codes[name] = p.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGUSR1)  # every thread's stack into its log, then kill
            time.sleep(1.0)
            p.kill()
            codes[name] = p.wait()
    return codes
