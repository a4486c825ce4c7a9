"""The fuzz client of ``legid bench fuzz``: one rclpy node in the bench process.

:class:`FuzzClient` publishes the good biped stream and the bad input, calls services, watches
every output for NaN/inf and tells whether each node still works.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Callable, Dict, List

import numpy as np

from legid_ros.bench.node_procs import NodeProcess

#: ``layout.data_offset`` marking the fuzzer's own legid/parameters (not counted as outputs).
FUZZ_MARK = 4242
#: Good samples published after each case before the liveness check [samples].
SETTLE = 600


class FuzzClient:
    """Publisher of good and bad input, service caller and output watcher.

    Args:
        ctx: rclpy context (initialised on the pipeline's domain).
        nodes: The pipeline's node processes by name.
        work: Work directory.
    """

    def __init__(self, ctx, nodes: Dict[str, NodeProcess], work: Path):
        from diagnostic_msgs.msg import DiagnosticArray
        from geometry_msgs.msg import PointStamped, WrenchStamped
        from rclpy.node import Node
        from sensor_msgs.msg import Imu, JointState
        from std_msgs.msg import Float64MultiArray
        from trajectory_msgs.msg import JointTrajectory

        from legid_ros.core.synthetic import SyntheticConfig, simulate_biped
        from legid_ros.ros.executor import make_executor
        from legid_ros.ros.node_util import latched_qos, sensor_qos

        self.ctx, self.nodes, self.work = ctx, nodes, work
        self.env = next(iter(nodes.values())).env
        self.extra: List[NodeProcess] = []
        self.lost = 0
        self.nonfinite = 0
        self.files_outside = 0
        self.outputs: Dict[str, int] = {}
        self.rec = simulate_biped(SyntheticConfig(duration_s=6.0, seed=21))
        self.node = Node('legid_fuzzer', context=ctx)
        self.ex = make_executor(context=ctx)
        self.ex.add_node(self.node)
        qos = sensor_qos(6000)
        n = self.node
        self.pub = {'js': n.create_publisher(JointState, 'joint_states', qos),
                    'imu': n.create_publisher(Imu, 'imu', qos),
                    'left': n.create_publisher(WrenchStamped, 'left_foot/wrench', qos),
                    'right': n.create_publisher(WrenchStamped, 'right_foot/wrench', qos),
                    'window': n.create_publisher(Float64MultiArray, 'legid/window', 50),
                    'parameters': n.create_publisher(Float64MultiArray, 'legid/parameters',
                                                     latched_qos(10)),
                    'reference': n.create_publisher(JointTrajectory, 'legid/reference', 10)}
        self.windows = 0
        self.last_window = None
        self.ff = 0
        self.diag: Dict[str, dict] = {}
        self.est_progress = 0  # estimator diagnostics whose window count changed
        self.est_diags = 0  # estimator diagnostics received
        n.create_subscription(Float64MultiArray, 'legid/window', self._on_window, 100)
        n.create_subscription(Float64MultiArray, 'legid/parameters', self._on_parameters,
                              latched_qos(10))
        n.create_subscription(Float64MultiArray, 'legid/feedforward', self._on_ff, 100)
        n.create_subscription(JointState, 'legid/command', self._on_command, 100)
        for topic in ('legid/zmp/measured', 'legid/zmp/predicted'):
            n.create_subscription(PointStamped, topic,
                                  lambda m, t=topic: self._check(t, [m.point.x, m.point.y]),
                                  100)
        n.create_subscription(DiagnosticArray, '/diagnostics', self._on_diag, 100)
        self._clients = {}
        self.sample = 0  # good samples published so far
        self.base = math.floor(time.time())

    # ---------------------------------------------------------------- outputs
    def _check(self, topic: str, values) -> None:
        self.outputs[topic] = self.outputs.get(topic, 0) + 1
        arr = np.asarray(values, float)
        if arr.size and not np.all(np.isfinite(arr)):
            self.nonfinite += 1

    def _on_window(self, msg) -> None:
        self.windows += 1
        self.last_window = msg

    def _on_parameters(self, msg) -> None:
        if msg.layout.data_offset != FUZZ_MARK:
            self._check('legid/parameters', msg.data)

    def _on_ff(self, msg) -> None:
        self.ff += 1
        self._check('legid/feedforward', msg.data)

    def _on_command(self, msg) -> None:
        self._check('legid/command', list(msg.position) + list(msg.velocity)
                    + list(msg.effort))

    def _on_diag(self, msg) -> None:
        for st in msg.status:
            values = {kv.key: kv.value for kv in st.values}
            before = self.diag.get(st.name, {}).get('windows')
            if st.name == 'legid estimator':
                self.est_diags += 1
                self.est_progress += values.get('windows') != before
            self.diag[st.name] = values

    def est_status(self) -> dict:
        """Last /diagnostics values of the estimator."""
        return self.diag.get('legid estimator', {})

    # --------------------------------------------------------------- spinning
    def spin_until(self, cond: Callable[[], bool], timeout_s: float) -> bool:
        """Spin until ``cond()`` or the deadline [s]."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            self.ex.spin_once(timeout_sec=0.01)
            if cond():
                return True
        return bool(cond())

    def wait_ready(self, timeout_s: float, names=None) -> bool:
        """Wait until each node answers its get_parameters service (it is spinning).

        Fresh clients, and a new request every 2 s: a reply sent before the new server's
        reply writer matched this client is lost (DDS), e.g. just after a restart."""
        from rcl_interfaces.srv import GetParameters

        names = list(names or self.nodes)
        clients = {n: self.node.create_client(GetParameters, f'/{n}/get_parameters')
                   for n in names}
        sent: Dict[str, tuple] = {}
        done = set()

        def ready():
            now = time.monotonic()
            for name in names:
                if name in done:
                    continue
                fut, at = sent.get(name, (None, -1e9))
                if fut is not None and fut.done():
                    done.add(name)
                elif now - at > 2.0 and clients[name].service_is_ready():
                    sent[name] = (clients[name].call_async(
                        GetParameters.Request(names=['robot'])), now)
            return len(done) == len(names)
        try:
            return self.spin_until(ready, timeout_s)
        finally:
            for cl in clients.values():
                self.node.destroy_client(cl)

    def _client(self, srv_type, name: str):
        if name not in self._clients:
            self._clients[name] = self.node.create_client(srv_type, name)
        return self._clients[name]

    def forget_clients(self, node: str) -> None:
        """Drop the cached service clients of ``node`` (after its restart)."""
        for name in [k for k in self._clients if k.startswith(f'/{node}/')]:
            self.node.destroy_client(self._clients.pop(name))

    def call_async_many(self, service: str, n: int) -> list:
        """``n`` asynchronous Trigger calls at once; returns the futures."""
        from std_srvs.srv import Trigger

        cl = self._client(Trigger, service)
        self.spin_until(cl.service_is_ready, 30.0)
        return [cl.call_async(Trigger.Request()) for _ in range(n)]

    def call_many(self, service: str, n: int, wave: int = 10, timeout_s: float = 10.0
                  ) -> List[dict]:
        """``n`` Trigger calls in waves of ``wave`` (the service queues hold 10 requests);
        returns {success, message} per answered call."""
        answered = []
        for start in range(0, n, wave):
            futures = self.call_async_many(service, min(wave, n - start))
            self.spin_until(lambda: all(f.done() for f in futures), timeout_s)
            answered += [{'success': bool(f.result().success), 'message': f.result().message}
                         for f in futures if f.done() and f.result() is not None]
        return answered

    # ------------------------------------------------------------ good stream
    def stamp(self, k: int = None) -> float:
        """Stamp of good sample ``k`` (default: the next one) [s]."""
        return self.base + 0.001 * (self.sample if k is None else k)

    def publish_good(self, n: int, names=None, chunk: int = 50) -> None:
        """Publish ``n`` good samples (IMU, both foot wrenches, joint state) at 1 kHz stamps."""
        from legid_ros.ros import conversions as cv

        rec = self.rec
        names = list(names or rec.joint_names)
        order = [list(rec.joint_names).index(j) for j in names]
        for i in range(n):
            k = self.sample % rec.n
            t = self.stamp()
            self.pub['imu'].publish(cv.imu_msg(t, 'imu_link', rec.imu_quat[k], rec.imu_gyro[k],
                                               rec.imu_acc[k]))
            for foot, frame in (('left', 'l_ankle_ft'), ('right', 'r_ankle_ft')):
                self.pub[foot].publish(cv.wrench_msg(t, frame, rec.foot_wrench[foot][k]))
            self.pub['js'].publish(cv.joint_state_msg(t, names, rec.q[k][order],
                                                      rec.qd[k][order], rec.tau[k][order]))
            self.sample += 1
            if i % chunk == chunk - 1:
                self.spin_until(lambda: False, 0.01)

    def reference(self) -> None:
        """A held reference at the stream's first posture (the controller then commands)."""
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

        rec = self.rec
        nj = len(rec.joint_names)
        self.pub['reference'].publish(JointTrajectory(
            joint_names=list(rec.joint_names), points=[JointTrajectoryPoint(
                positions=rec.q[0].tolist(), velocities=[0.0] * nj,
                accelerations=[0.0] * nj)]))

    def warm_up(self) -> None:
        """Good data until every node produces output."""
        self.spin_until(lambda: self.pub['js'].get_subscription_count() >= 2
                        and self.pub['reference'].get_subscription_count() >= 1, 30.0)
        self.check_alive('warm_up', count_lost=False)

    def check_alive(self, case: str, count_lost: bool = True) -> Dict[str, bool]:
        """Publish good data; each node must still produce its output (restarted if not)."""
        out = {}
        for name, proc in self.nodes.items():
            if not proc.alive():
                out[name] = False
        est0, win0, ff0 = self.est_progress, self.windows, self.ff
        self.reference()
        checks = {'buffer': lambda: self.windows > win0 + 1,
                  'controller': lambda: self.ff > ff0 + 5,
                  'estimator': lambda: self.est_progress > est0}
        for _ in range(3):
            self.publish_good(SETTLE)
            if self.spin_until(lambda: all(c() for c in checks.values()), 5.0):
                break
        for name, check in checks.items():
            out.setdefault(name, bool(check()) and self.nodes[name].alive())
        for name, ok in out.items():
            if not ok:
                if count_lost:
                    self.lost += 1
                proc = self.nodes[name]
                proc.kill()
                proc.start()
                self.forget_clients(name)
                self.wait_ready(120.0, names=[name])
        return out

    def close(self) -> None:
        """Destroy the client node."""
        try:
            self.ex.remove_node(self.node)
            self.node.destroy_node()
        except Exception:  # noqa: BLE001  (best effort at the end of the bench)
            pass
