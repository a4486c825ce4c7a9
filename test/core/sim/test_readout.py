"""The MuJoCo readout's accelerometer reads the motion that happens, not the forward dynamics'
acceleration that the implicit damping then changes."""

import mujoco
import numpy as np

from legid_ros.core.sim import readout
from legid_ros.core.sim.described.run import DescribedRun, foot_bodies
from legid_ros.core.sim.mjcf import build_spec

GRAVITY = np.array([0.0, 0.0, -9.81])  # [m/s^2]


def _swinging_legs(robot, steps: int = 400):
    """Solo12 in the air, its legs swung at 3-4 Hz by the default servos (``kv dt`` over the
    knees' inertia well above 1), recorded at every physics step."""
    opt = DescribedRun().options(robot.total_mass)
    opt.floor = False
    spec, info = build_spec(robot, options=opt)
    model = spec.compile()
    data = mujoco.MjData(model)
    lay = readout.make_layout(model, info, foot_bodies(robot), {})
    t = np.arange(steps + 1) * model.opt.timestep
    q_ref = np.tile(data.qpos[lay.qpos_adr], (steps + 1, 1))
    q_ref[:, 1] += 0.4 * np.sin(2 * np.pi * 3 * t)
    q_ref[:, 2] += 0.6 * np.sin(2 * np.pi * 4 * t)
    raw, _ = readout.track(model, data, lay, q_ref, 1)
    return model, lay, raw


def test_the_accelerometer_is_the_base_s_realized_acceleration(solo12):
    """With the IMU at the base origin, the accelerometer equals the base's velocity change
    over each step minus gravity, in base axes (to 1e-9 m/s^2), where the forward dynamics'
    acceleration that MuJoCo's own sensor reads is metres per second squared away."""
    model, lay, raw = _swinging_legs(solo12)
    d, a = lay.free_dof, lay.free_qpos
    adr = lay.imu_adr[2]
    dt = model.opt.timestep
    realized, forward = [], []
    for k in range(len(raw['qvel']) - 1):
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, raw['qpos'][k][a + 3:a + 7])
        rot = rot.reshape(3, 3)
        dv = (raw['qvel'][k + 1][d:d + 3] - raw['qvel'][k][d:d + 3]) / dt
        realized.append(rot.T @ (dv - GRAVITY))
        forward.append(rot.T @ (raw['qacc'][k][d:d + 3] - GRAVITY))
    realized, forward = np.array(realized), np.array(forward)
    sens = raw['sens'][:len(realized), adr:adr + 3]
    assert np.abs(sens - realized).max() < 1e-9
    assert np.abs(forward - realized).max() > 1.0  # the case the readout must not miss
