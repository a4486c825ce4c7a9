"""The input cases of ``legid bench fuzz``: :data:`CASES` lists them as (name, function of the
:class:`~legid_ros.bench.fuzz.client.FuzzClient`)."""

from __future__ import annotations

import copy
import math
from typing import Callable, List, Tuple

import numpy as np

from legid_ros.bench.fuzz.client import FUZZ_MARK, FuzzClient


def _js(c: FuzzClient, names=None, q=None, qd=None, tau=None, t=None, **fields):
    """A joint state of the current good sample with fields replaced."""
    from legid_ros.ros import conversions as cv

    rec = c.rec
    k = c.sample % rec.n
    msg = cv.joint_state_msg(c.stamp() if t is None else t, list(names or rec.joint_names),
                             rec.q[k] if q is None else q, rec.qd[k] if qd is None else qd,
                             rec.tau[k] if tau is None else tau)
    for key, value in fields.items():
        setattr(msg, key, value)
    return msg


def _nan_in(c: FuzzClient, field: str, value: float):
    rec = c.rec
    arr = {'q': rec.q, 'qd': rec.qd, 'tau': rec.tau}[field][c.sample % rec.n].copy()
    arr[1] = value
    return _js(c, **{field: arr})


def _publish(c: FuzzClient, topic: str, msgs) -> None:
    for m in msgs:
        c.pub[topic].publish(m)
    c.spin_until(lambda: False, 0.05)


def _imu(c: FuzzClient, frame='imu_link', quat=None, gyro=None, acc=None):
    from legid_ros.ros import conversions as cv

    rec = c.rec
    k = c.sample % rec.n
    return cv.imu_msg(c.stamp(), frame, rec.imu_quat[k] if quat is None else quat,
                      rec.imu_gyro[k] if gyro is None else gyro,
                      rec.imu_acc[k] if acc is None else acc)


def _wrench(c: FuzzClient, frame='l_ankle_ft', w=None):
    from legid_ros.ros import conversions as cv

    rec = c.rec
    return cv.wrench_msg(c.stamp(), frame, rec.foot_wrench['left'][c.sample % rec.n]
                         if w is None else w)


def _with(values, index, value):
    arr = np.array(values, float)
    arr[index] = value
    return arr


def _window_nan(c: FuzzClient):
    msg = copy.deepcopy(c.last_window)
    if msg is None:
        return []
    data = np.array(msg.data, float)
    data[::7] = np.nan
    msg.data = data.tolist()
    return [msg]


def _parameters(c: FuzzClient, values, names):
    from legid_ros.ros import conversions as cv

    msg = cv.parameters_msg(values, names)
    msg.layout.data_offset = FUZZ_MARK
    return msg


def _model_names():
    from legid_ros.core.inertial import parameter_names
    from legid_ros.core.robot import load_robot
    return parameter_names(load_robot('biped').model)


def _reference(c: FuzzClient, names, point):
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    return JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(**point)]
                           if point is not None else [])


def _storm(service: str, n: int = 100):
    def case(c: FuzzClient):
        answered = c.call_many(service, n)
        return {'answered': len(answered), 'succeeded': sum(a['success'] for a in answered)}
    return case


def _kill_restart(name: str):
    def case(c: FuzzClient):
        proc = c.nodes[name]
        proc.kill()
        proc.start()
        c.forget_clients(name)
        return {'restarted': c.wait_ready(120.0, names=[name])}
    return case


def _cases() -> List[Tuple[str, Callable]]:
    from geometry_msgs.msg import WrenchStamped
    from sensor_msgs.msg import Imu, JointState
    from std_msgs.msg import Float64MultiArray, MultiArrayDimension

    nan, inf = math.nan, math.inf
    garbage = Float64MultiArray(data=[1.0, 2.0])
    garbage.layout.dim = [MultiArrayDimension(label='x', size=9, stride=9),
                          MultiArrayDimension(label='nonsense', size=1, stride=1)]
    js = 'js'
    return [
        ('joint_state_empty', lambda c: _publish(c, js, [JointState()])),
        ('joint_state_nan_position', lambda c: _publish(c, js, [_nan_in(c, 'q', nan)])),
        ('joint_state_inf_position', lambda c: _publish(c, js, [_nan_in(c, 'q', inf)])),
        ('joint_state_nan_velocity', lambda c: _publish(c, js, [_nan_in(c, 'qd', nan)])),
        ('joint_state_inf_effort', lambda c: _publish(c, js, [_nan_in(c, 'tau', -inf)])),
        ('joint_state_short_position', lambda c: _publish(c, js, [_js(c, position=[0.1])])),
        ('joint_state_long_velocity', lambda c: _publish(c, js, [_js(c, velocity=[0.0] * 99)])),
        ('joint_state_unknown_joints', lambda c: _publish(c, js, [_js(
            c, names=[f'bogus_{i}' for i in range(len(c.rec.joint_names))])])),
        ('joint_state_reordered_joints', lambda c: c.publish_good(
            300, names=list(c.rec.joint_names)[::-1])),
        ('joint_state_10000_joints', lambda c: _publish(c, js, [_js(
            c, names=[f'j{i}' for i in range(10000)], q=np.zeros(10000), qd=np.zeros(10000),
            tau=np.zeros(10000))])),
        ('joint_state_1mb_name', lambda c: _publish(c, js, [_js(
            c, names=['x' * 1_000_000] + list(c.rec.joint_names)[1:])])),
        ('joint_state_stamp_zero', lambda c: _publish(c, js, [_js(c, t=0.0)])),
        ('joint_state_stamp_backwards', lambda c: _publish(c, js, [_js(c, t=c.stamp() - 10)])),
        ('joint_state_stamp_duplicated', lambda c: _publish(c, js, [_js(c, t=c.stamp(
            c.sample - 1))] * 50)),
        ('joint_state_stamp_year_2100', lambda c: _publish(c, js, [_js(c, t=4102444800.0)])),
        ('joint_state_burst_5000', lambda c: c.publish_good(5000, chunk=5000)),
        ('imu_nan_orientation', lambda c: _publish(c, 'imu', [_imu(c, quat=[nan, 0, 0, 1])])),
        ('imu_inf_angular_velocity', lambda c: _publish(c, 'imu', [_imu(c, gyro=[inf, 0, 0])])),
        ('imu_nan_linear_acceleration', lambda c: _publish(c, 'imu', [_imu(
            c, acc=[0, nan, 9.8])])),
        ('imu_empty', lambda c: _publish(c, 'imu', [Imu()])),
        ('imu_wrong_frame', lambda c: _publish(c, 'imu', [_imu(c, frame='l_foot')])),
        ('wrench_nan_force', lambda c: _publish(c, 'left', [_wrench(
            c, w=_with(c.rec.foot_wrench['left'][0], 2, nan))])),
        ('wrench_inf_torque', lambda c: _publish(c, 'left', [_wrench(
            c, w=_with(c.rec.foot_wrench['left'][0], 4, inf))])),
        ('wrench_empty', lambda c: _publish(c, 'left', [WrenchStamped()])),
        ('wrench_wrong_frame', lambda c: _publish(c, 'left', [_wrench(c, frame='r_ankle_ft')])),
        ('window_empty', lambda c: _publish(c, 'window', [Float64MultiArray()])),
        ('window_garbage_layout', lambda c: _publish(c, 'window', [garbage])),
        ('window_nan_data', lambda c: _publish(c, 'window', _window_nan(c))),
        ('parameters_nan', lambda c: _publish(c, 'parameters', [_parameters(
            c, np.full(len(_model_names()), nan), _model_names())])),
        ('parameters_wrong_names', lambda c: _publish(c, 'parameters', [_parameters(
            c, np.ones(3), ['a.m', 'b.m', 'c.m'])])),
        ('reference_empty', lambda c: _publish(c, 'reference', [_reference(c, [], None)])),
        ('reference_nan', lambda c: _publish(c, 'reference', [_reference(
            c, list(c.rec.joint_names), {'positions': [nan] * len(c.rec.joint_names)})])),
        ('reference_unknown_joints', lambda c: _publish(c, 'reference', [_reference(
            c, ['nope'], {'positions': [0.0]})])),
        ('storm_estimator_save', _storm('/estimator/save')),
        ('storm_estimator_reset', _storm('/estimator/reset')),
        ('storm_buffer_reset', _storm('/buffer/reset')),
        ('sigkill_restart_buffer', _kill_restart('buffer')),
        ('sigkill_restart_controller', _kill_restart('controller')),
        ('sigkill_restart_estimator', _kill_restart('estimator')),
    ]


class _LazyCases:
    """The case list, built on first use (message imports need a ROS install)."""

    def __iter__(self):
        return iter(_cases())

    def __len__(self):
        return len(_cases())


CASES = _LazyCases()
