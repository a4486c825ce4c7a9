"""The listener node of ``legid demo``: records what the pipeline publishes, for the report."""

from __future__ import annotations

import time
from typing import Dict, List

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from legid_ros.ros import conversions as cv
from legid_ros.ros.node_util import latched_qos
from legid_ros.ros.robustness import GuardedNode


class DemoListener(GuardedNode):
    """Subscribes to the pipeline's outputs and keeps time series of them.

    Attributes:
        params: (wall time [s], values) of every legid/parameters message.
        names: Parameter names (from the first message).
        truth: (values, names) of the ground truth, once received.
        zmp_measured, zmp_predicted: Lists of (stamp [s], x [m], y [m]).
        diagnostics: Latest (level, message, values) per status name.
        solve_ms: Estimator solve times [ms] seen in its diagnostics (wall clock).
        solve_cpu_ms: The same updates' CPU time of the estimator's thread [ms] (NaN when the
            diagnostics do not carry it).
        counts: Messages received per topic.
    """

    def __init__(self, **kwargs):
        super().__init__('legid_demo_listener', **kwargs)
        self.params: List = []
        self.names: List[str] = []
        self.truth = None
        self.zmp_measured: List = []
        self.zmp_predicted: List = []
        self.diagnostics: Dict[str, tuple] = {}
        self.solve_ms: List[float] = []
        self.solve_cpu_ms: List[float] = []
        self.counts = {'feedforward': 0, 'joint_trajectory': 0, 'parameters': 0, 'windows': 0}
        self.create_subscription(Float64MultiArray, 'legid/parameters', self._on_params,
                                 latched_qos(10))
        self.create_subscription(Float64MultiArray, 'legid/sim/ground_truth', self._on_truth,
                                 latched_qos())
        self.create_subscription(PointStamped, 'legid/zmp/measured',
                                 lambda m: self._point(self.zmp_measured, m), 200)
        self.create_subscription(PointStamped, 'legid/zmp/predicted',
                                 lambda m: self._point(self.zmp_predicted, m), 200)
        self.create_subscription(DiagnosticArray, '/diagnostics', self._on_diag, 100)
        self.create_subscription(Float64MultiArray, 'legid/feedforward',
                                 lambda m: self._count('feedforward'), 100, raw=True)
        self.create_subscription(Float64MultiArray, 'legid/window',
                                 lambda m: self._count('windows'), 100, raw=True)
        self.create_subscription(JointTrajectory, 'legid/joint_trajectory',
                                 lambda m: self._count('joint_trajectory'), 10, raw=True)
        self.save_client = self.create_client(Trigger, '/estimator/save')
        self.gait_client = self.create_client(Trigger, '/ik/start_gait')
        self.pub_reference = self.create_publisher(JointTrajectory, 'legid/reference', 10)
        self.create_subscription(JointState, 'joint_states', self._on_joint_state, 100,
                                 raw=True)
        self.counts['joint_states'] = 0
        self.reference_sent = False

    def _on_joint_state(self, raw):
        """Count; on the first one, publish a hold-posture reference for the controller."""
        self.counts['joint_states'] += 1
        if self.reference_sent:
            return
        t, names, pos, _, _ = cv.decode_joint_state(raw)
        ref = JointTrajectory()
        ref.joint_names = list(names)
        for k, ts in enumerate((0.0, 3600.0)):
            pt = JointTrajectoryPoint()
            pt.positions = [float(x) for x in pos]
            pt.velocities = [0.0] * len(pos)
            pt.accelerations = [0.0] * len(pos)
            pt.time_from_start.sec = int(ts)
            ref.points.append(pt)
        self.pub_reference.publish(ref)
        self.reference_sent = True
        if self.gait_client.service_is_ready():
            self.gait_client.call_async(Trigger.Request())

    def _count(self, key):
        self.counts[key] += 1

    def _on_params(self, msg):
        values, names = cv.parameters_from_msg(msg)
        self.names = names
        self.params.append((time.time(), values))
        self.counts['parameters'] += 1

    def _on_truth(self, msg):
        self.truth = cv.parameters_from_msg(msg)

    @staticmethod
    def _point(store, msg):
        store.append((cv.stamp_to_sec(msg.header.stamp), msg.point.x, msg.point.y))

    def _on_diag(self, msg):
        for st in msg.status:
            got = cv.diagnostic_values(msg, st.name)
            if got is None:
                continue
            self.diagnostics[st.name] = got
            if st.name == 'legid estimator' and 'solve_time_ms' in got[2]:
                value = _float(got[2]['solve_time_ms'])
                if not np.isfinite(value):
                    continue
                if not self.solve_ms or value != self.solve_ms[-1]:
                    self.solve_ms.append(value)
                    self.solve_cpu_ms.append(_float(got[2].get('solve_cpu_ms')))

    def zmp_deviation(self):
        """(stamps [s], |measured - predicted| [m]) at the predicted ZMP stamps."""
        if len(self.zmp_measured) < 2 or not self.zmp_predicted:
            return np.zeros(0), np.zeros(0)
        m = np.array(sorted(self.zmp_measured))
        p = np.array(sorted(self.zmp_predicted))
        inside = (p[:, 0] >= m[0, 0]) & (p[:, 0] <= m[-1, 0])
        p = p[inside]
        mx = np.interp(p[:, 0], m[:, 0], m[:, 1])
        my = np.interp(p[:, 0], m[:, 0], m[:, 2])
        return p[:, 0], np.hypot(mx - p[:, 1], my - p[:, 2])


def _float(text) -> float:
    """A diagnostics value as a number (NaN when missing or not a number)."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return float('nan')
