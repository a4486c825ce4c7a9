"""The ik node with real rclpy: requests in, joint trajectories out, errors on log/diagnostics."""

import math

import numpy as np
import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import Log
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, MultiDOFJointTrajectory

from legid_ros.core.ik.leg import LegKinematics
from legid_ros.ros import conversions as cv
from legid_ros.ros.conversions_ik import foot_targets_msg, joint_trajectory_arrays
from legid_ros.ros.ik_node import DIAG_NAME, IkNode

from pipeline_helpers import EVENT_S, params, ros_context, set_remote, spin_for, spin_until

pytestmark = pytest.mark.timeout(300)
TH50 = math.radians(30.0)  # [rad]


class Probe:
    """A test node that sends foot targets and records trajectories, diagnostics and /rosout."""

    def __init__(self, ctx, ex, nodes, **overrides):
        self.ik = IkNode(context=ctx, parameter_overrides=params(**overrides))
        self.io = rclpy.create_node('ik_probe', context=ctx)
        nodes += [self.ik, self.io]
        self.ex = ex
        self.trajs, self.diags, self.logs = [], [], []
        self.pub = self.io.create_publisher(MultiDOFJointTrajectory, 'legid/foot_targets', 10)
        self.io.create_subscription(JointTrajectory, 'legid/joint_trajectory', self.trajs.append,
                                    10)
        self.io.create_subscription(DiagnosticArray, '/diagnostics', self.diags.append, 50)
        self.io.create_subscription(Log, '/rosout', self.logs.append, 100)
        self.start = self.io.create_client(Trigger, '/ik/start_gait')
        self.stop = self.io.create_client(Trigger, '/ik/stop_gait')
        for n in nodes:
            ex.add_node(n)
        assert spin_until(ex, lambda: self.pub.get_subscription_count() > 0
                          and self.start.service_is_ready())

    def errors(self):
        vals = [cv.diagnostic_values(d, DIAG_NAME) for d in self.diags]
        return [v for v in vals if v and v[0] == 2]

    def call(self, client):
        fut = client.call_async(Trigger.Request())
        assert spin_until(self.ex, fut.done)
        return fut.result()


def _known_request():
    """Joints with a3 = 30 deg for lf and rh, their pinocchio foot positions and velocities."""
    times = np.array([0.0, 0.05, 0.1])
    q = {'lf': np.array([[0.05, -0.9, 1.2, 0.0], [0.0, -0.85, 1.1, 0.0], [-0.05, -0.8, 1.0, 0.0]]),
         'rh': np.array([[0.0, -1.0, 1.4, 0.0], [0.1, -0.95, 1.3, 0.0], [0.0, -0.9, 1.2, 0.0]])}
    pos, vel = {}, {}
    for leg, qq in q.items():
        qq[:, 3] = TH50 - qq[:, 1] - qq[:, 2]
        lk = LegKinematics(leg)
        pos[leg] = np.array([lk.fk(row) for row in qq])
        vel[leg] = np.zeros_like(pos[leg])
    return times, q, pos, vel


def test_request_gives_the_right_joint_trajectory():
    """Feet from known joints come back as those joints (1e-9 rad), names and times in order."""
    times, q, pos, vel = _known_request()
    with ros_context() as (ctx, ex, nodes):
        pr = Probe(ctx, ex, nodes, landing_amplitude_rad=0.0, landing_front_rad=TH50,
                   landing_hind_rad=TH50)
        pr.pub.publish(foot_targets_msg(['lf', 'rh'], times, pos, vel))
        assert spin_until(ex, lambda: len(pr.trajs) >= 1)
        assert spin_until(ex, lambda: any(cv.diagnostic_values(d, DIAG_NAME)
                                          for d in pr.diags))
        names, t_out, q_out = joint_trajectory_arrays(pr.trajs[0])
        level, _, values = [cv.diagnostic_values(d, DIAG_NAME) for d in pr.diags][-1]
        assert level == 0 and float(values['min_abs_det_je_m2']) > 0.01
    assert names == ['lf_hip_roll', 'lf_hip_pitch', 'lf_knee', 'lf_ankle_pitch',
                     'rh_hip_roll', 'rh_hip_pitch', 'rh_knee', 'rh_ankle_pitch']
    assert t_out == pytest.approx(times, abs=1e-9)
    assert np.max(np.abs(q_out - np.concatenate([q['lf'], q['rh']], axis=1))) < 1e-9
    assert len(pr.trajs[0].points[0].velocities) == 8
    assert not pr.errors()


def test_runtime_parameters_apply_to_the_next_request():
    """Gait values set at run time shape the next request; an inconsistent gait is refused."""
    times, q, pos, vel = _known_request()
    with ros_context() as (ctx, ex, nodes):
        pr = Probe(ctx, ex, nodes)
        results = set_remote(ex, pr.io, '/ik', landing_amplitude_rad=0.0,
                             landing_front_rad=TH50, landing_hind_rad=TH50, frame_id='base')
        assert all(r.successful for r in results), [r.reason for r in results]
        bad, = set_remote(ex, pr.io, '/ik', duty=1.0)
        assert not bad.successful and 'duty' in bad.reason
        pr.pub.publish(foot_targets_msg(['lf', 'rh'], times, pos, vel))
        assert spin_until(ex, lambda: len(pr.trajs) >= 1)
        assert pr.ik.p.duty == 0.5
    _, _, q_out = joint_trajectory_arrays(pr.trajs[0])
    assert pr.trajs[0].header.frame_id == 'base'
    assert np.max(np.abs(q_out - np.concatenate([q['lf'], q['rh']], axis=1))) < 1e-9


def test_unreachable_request_is_reported_not_published():
    """An unreachable target: ERROR on /rosout and /diagnostics with leg and time; no output."""
    times, q, pos, vel = _known_request()
    pos['rh'][1] = [0.0, 0.0, -1.5]
    with ros_context() as (ctx, ex, nodes):
        pr = Probe(ctx, ex, nodes)
        pr.pub.publish(foot_targets_msg(['lf', 'rh'], times, pos))
        assert spin_until(ex, lambda: len(pr.errors()) >= 1)
        assert spin_until(ex, lambda: any('unreachable' in m.msg for m in pr.logs))
        spin_for(ex, 0.2)
        assert pr.trajs == []
        level, message, values = pr.errors()[0]
        assert values['leg'] == 'rh' and float(values['time_s']) == pytest.approx(0.05)
        assert float(values['distance_m']) > 0.5
        assert [m for m in pr.logs if m.level == 40 and 'rh' in m.msg]


def test_bad_inputs_do_not_crash_the_node():
    """NaN targets and unknown legs give ERROR diagnostics; a later good request still works."""
    times, q, pos, vel = _known_request()
    nan = {leg: p.copy() for leg, p in pos.items()}
    nan['lf'][2, 0] = np.nan
    with ros_context() as (ctx, ex, nodes):
        pr = Probe(ctx, ex, nodes)
        pr.pub.publish(foot_targets_msg(['lf', 'rh'], times, nan))
        pr.pub.publish(foot_targets_msg(['xx'], times, {'xx': pos['lf']}))
        assert spin_until(ex, lambda: len(pr.errors()) >= 2)
        msgs = ' '.join(e[1] for e in pr.errors())
        assert 'non-finite' in msgs and 'unknown legs' in msgs
        pr.pub.publish(foot_targets_msg(['lf'], times, pos))
        assert spin_until(ex, lambda: len(pr.trajs) >= 1)
        assert pr.ik.errors == 2


def test_start_and_stop_gait():
    """start_gait publishes a 16-joint trot every cycle; stop_gait stops it."""
    with ros_context() as (ctx, ex, nodes):
        pr = Probe(ctx, ex, nodes, period_s=0.4, gait_dt_s=0.02)
        res = pr.call(pr.start)
        assert res.success, res.message
        assert spin_until(ex, lambda: len(pr.trajs) >= 2)
        names, t, qq = joint_trajectory_arrays(pr.trajs[0])
        assert len(names) == 16 and qq.shape == (20, 16)
        _, _, q2 = joint_trajectory_arrays(pr.trajs[1])
        assert np.array_equal(qq, q2)  # closed form: every cycle identical, no drift
        lf = names.index('lf_knee'), names.index('rf_knee')
        assert np.max(np.abs(qq[:10, lf[0]] - qq[10:, lf[1]])) < 1e-9  # half a cycle apart
        assert pr.call(pr.stop).success and not pr.ik.gait_running
        stopped = pr.ik.get_clock().now().nanoseconds
        spin_for(ex, 0.6)  # a cycle is 0.4 s: one would be published here if still running
        # cycles published before the stop may still arrive; none is stamped after it
        assert all(m.header.stamp.sec * 10**9 + m.header.stamp.nanosec <= stopped
                   for m in pr.trajs)


def test_start_gait_refuses_impossible_gait():
    """A 1 m stride cannot be reached: start_gait fails, diagnostics say so, nothing published."""
    with ros_context() as (ctx, ex, nodes):
        pr = Probe(ctx, ex, nodes, stride_m=1.0)
        res = pr.call(pr.start)
        assert not res.success and 'reachable' in res.message
        assert pr.errors() and not pr.ik.gait_running
        spin_for(ex, 0.2)
        assert pr.trajs == []


def test_main_exits_cleanly_on_sigint():
    """The ik_node executable starts, serves, and exits with code 0 on SIGINT."""
    import os
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, '-c', 'from legid_ros.ros.ik_node import main; '
                             'raise SystemExit(main())'], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(os.environ),
                            # a shell may start us with SIGINT ignored; the node must see it
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        with ros_context() as (ctx, ex, nodes):
            io = rclpy.create_node('ik_sigint_probe', context=ctx)
            nodes.append(io)
            ex.add_node(io)
            client = io.create_client(Trigger, '/ik/stop_gait')
            assert spin_until(ex, client.service_is_ready)
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=EVENT_S)  # a busy machine may take long; never forever
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert code == 0, proc.stderr.read().decode()[-2000:]


def test_config_yaml_matches_declared_defaults():
    """config/ik.yaml lists exactly the node's parameters with the same defaults and types."""
    from pathlib import Path

    import yaml

    from legid_ros.ros.ik_node import PARAMETERS
    path = Path(__file__).resolve().parents[2] / 'config' / 'ik.yaml'
    cfg = yaml.safe_load(path.read_text())['ik']['ros__parameters']
    assert set(cfg) == {spec.name for spec in PARAMETERS}
    for spec in PARAMETERS:
        name, default, description = spec.name, spec.default, spec.description
        assert type(cfg[name]) is type(default), name
        assert cfg[name] == pytest.approx(default) if isinstance(default, float) else \
            cfg[name] == default
        assert '[' in description or name in ('task', 'frame_id', 'robot'), name  # units stated


def _renamed_quadruped(tmp_path):
    """Description YAML of the built-in quadruped with its legs renamed (trot places kept)."""
    import yaml

    from legid_ros.core import paths
    desc = yaml.safe_load(paths.config_path('quadruped.yaml').read_text())
    names = {'lf': 'front_left', 'rf': 'front_right', 'lh': 'back_left', 'rh': 'back_right'}
    desc['legs'] = {names[leg]: dict(entry, gait_role=leg) for leg, entry in desc['legs'].items()}
    desc['urdf'] = str(paths.urdf_path('quadruped.urdf'))
    path = tmp_path / 'renamed.yaml'
    path.write_text(yaml.safe_dump(desc, sort_keys=False))
    return path


def test_robot_parameter_gives_the_legs_of_its_description(tmp_path):
    """With robot = a description whose legs are renamed, requests name the new legs and get
    the same joints; the old names are refused; a robot without legs is refused at run time."""
    times, q, pos, vel = _known_request()
    with ros_context() as (ctx, ex, nodes):
        pr = Probe(ctx, ex, nodes, robot=str(_renamed_quadruped(tmp_path)),
                   landing_amplitude_rad=0.0, landing_front_rad=TH50, landing_hind_rad=TH50)
        renamed = {'front_left': pos['lf'], 'back_right': pos['rh']}
        pr.pub.publish(foot_targets_msg(['front_left', 'back_right'], times, renamed))
        assert spin_until(ex, lambda: len(pr.trajs) >= 1)
        pr.pub.publish(foot_targets_msg(['lf'], times, pos))
        assert spin_until(ex, lambda: len(pr.errors()) >= 1)
        bad, = set_remote(ex, pr.io, '/ik', robot='biped')
        assert not bad.successful and 'legs' in bad.reason
        n_before = len(pr.trajs)
        assert pr.call(pr.start).success
        assert spin_until(ex, lambda: len(pr.trajs) > n_before)
        pr.call(pr.stop)
    names, _, q_out = joint_trajectory_arrays(pr.trajs[0])
    assert names[:4] == ['lf_hip_roll', 'lf_hip_pitch', 'lf_knee', 'lf_ankle_pitch']
    assert np.max(np.abs(q_out - np.concatenate([q['lf'], q['rh']], axis=1))) < 1e-9
    gait_names = list(pr.trajs[n_before].joint_names)
    assert len(gait_names) == 16 and gait_names[4:8] == ['rf_hip_roll', 'rf_hip_pitch',
                                                          'rf_knee', 'rf_ankle_pitch']
