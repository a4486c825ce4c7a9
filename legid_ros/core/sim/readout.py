"""Read a running MuJoCo biped into arrays: sensors, contact wrenches, free-joint state.

Every function reads ``mujoco.MjData`` after ``mj_step``: then ``sensordata``, ``qacc``,
``actuator_force`` and ``cfrc_ext`` all belong to the state *before* that step, which is why
the simulator stores ``qpos``/``qvel`` just before stepping.

The accelerometer is the exception (:func:`realized_accelerometer`): MuJoCo computes its
sensors from the step's forward-dynamics acceleration, but the ``implicitfast`` integrator then
applies the servo and joint damping at the end-of-step velocity, so the motion that happens
accelerates otherwise. A real accelerometer measures the motion: on Solo12's trot in MuJoCo
(servo damping ``kv dt`` 0.42 of a knee's inertia), the forward reading left the model ZMP of
the two-foot rows, with the true parameters and the IMU's base acceleration, 3.4 mm (x) off
their measured CoP on average (4.9 mm RMS); the reading of the realized motion, 0.7 mm
(2.2 mm RMS), as with the explicit ``Euler`` integrator (0.8 mm). The contact forces need no
such care: the damping acts on the joints only, so the realized motion satisfies the base's
Newton-Euler rows with the same contact forces.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List

import mujoco
import numpy as np

from legid_ros.core.sim.mjcf import SpecInfo


def _id(model, kind, name: str) -> int:
    i = mujoco.mj_name2id(model, kind, name)
    if i < 0:
        raise KeyError(f'{name} not in the MuJoCo model')
    return i


@dataclass
class Layout:
    """Indices into a compiled model for fast reads.

    Attributes:
        qpos_adr: qpos address of each actuated joint (pinocchio order).
        dof_adr: qvel address of each actuated joint.
        free_qpos: qpos address of the free joint (or -1).
        free_dof: qvel address of the free joint (or -1).
        touch_adr: Per foot, sensordata address of each touch sensor.
        foot_body: Per foot, body id of the foot.
        ft_site: Per foot, site id of the F/T frame.
        imu_adr: sensordata addresses of (quat, gyro, acc).
        base_body: Body id of the base.
        root_body: Root body id of the free tree (its subtree COM is cfrc_ext's point).
        feet: Foot names in order.
        ft_adr: Per foot with an ankle F/T, sensordata addresses of its (force, torque)
            sensors (MuJoCo: the wrench the leg exerts on the foot, in the site frame).
    """

    qpos_adr: np.ndarray
    dof_adr: np.ndarray
    free_qpos: int
    free_dof: int
    touch_adr: Dict[str, np.ndarray]
    foot_body: Dict[str, int]
    ft_site: Dict[str, int]
    imu_adr: tuple
    base_body: int
    root_body: int
    feet: List[str]
    ft_adr: Dict[str, tuple] = field(default_factory=dict)


def make_layout(model, info: SpecInfo, foot_links: Dict[str, str],
                ft_frames: Dict[str, str]) -> Layout:
    """Indices of everything the readout needs."""
    jid = [_id(model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in info.joint_names]
    free = [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
    sadr = model.sensor_adr
    touch = {f: np.array([sadr[_id(model, mujoco.mjtObj.mjOBJ_SENSOR, s)] for s in names])
             for f, names in info.touch_sensors.items()}
    imu = tuple(int(sadr[_id(model, mujoco.mjtObj.mjOBJ_SENSOR, s)]) for s in info.imu_sensors)
    base = _id(model, mujoco.mjtObj.mjOBJ_BODY, info.base_body)
    return Layout(qpos_adr=model.jnt_qposadr[jid], dof_adr=model.jnt_dofadr[jid],
                  free_qpos=int(model.jnt_qposadr[free[0]]) if free else -1,
                  free_dof=int(model.jnt_dofadr[free[0]]) if free else -1,
                  touch_adr=touch,
                  foot_body={f: _id(model, mujoco.mjtObj.mjOBJ_BODY, b)
                             for f, b in foot_links.items()},
                  ft_site={f: _id(model, mujoco.mjtObj.mjOBJ_SITE, s)
                           for f, s in ft_frames.items()},
                  imu_adr=imu, base_body=base, root_body=int(model.body_rootid[base]),
                  feet=list(info.touch_sensors),
                  ft_adr={f: tuple(int(sadr[_id(model, mujoco.mjtObj.mjOBJ_SENSOR, s)])
                                   for s in pair) for f, pair in info.ft_sensors.items()})


def ground_wrench_world(data, lay: Layout, foot: str) -> np.ndarray:
    """Contact wrench on a foot at the world origin, world axes ``[f, n]`` [N, N.m]."""
    b = lay.foot_body[foot]
    n_c, f = data.cfrc_ext[b, :3], data.cfrc_ext[b, 3:]
    c = data.subtree_com[lay.root_body]
    return np.concatenate([f, n_c + np.cross(c, f)])


def wrench_in_frame(data, site: int, wrench_world: np.ndarray) -> np.ndarray:
    """A world wrench at the origin moved to a site's origin and axes ``[f, n]``."""
    p = data.site_xpos[site]
    rot = data.site_xmat[site].reshape(3, 3)
    f, n_o = wrench_world[:3], wrench_world[3:]
    n_p = n_o - np.cross(p, f)
    return np.concatenate([rot.T @ f, rot.T @ n_p])


def zmp_of(wrench_world: np.ndarray) -> np.ndarray:
    """ZMP on the ground z = 0 of a wrench at the world origin [m] (NaN without load)."""
    fz = wrench_world[2]
    if fz <= 1e-6:
        return np.full(2, np.nan)
    return np.array([-wrench_world[4] / fz, wrench_world[3] / fz])


def base_state(qpos: np.ndarray, qvel: np.ndarray, qacc: np.ndarray, lay: Layout) -> tuple:
    """Base pose ``[x, y, z, qx, qy, qz, qw]``, twist and acceleration in the base frame.

    Twist and acceleration follow pinocchio's free-flyer convention (linear then angular, both
    in the base frame; acceleration = time derivative of that twist, spatial).
    """
    a = lay.free_qpos
    pos = qpos[a:a + 3]
    w, x, y, z = qpos[a + 3:a + 7]
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, np.ascontiguousarray(qpos[a + 3:a + 7]))
    rot = rot.reshape(3, 3)
    d = lay.free_dof
    v_lin = rot.T @ qvel[d:d + 3]
    omega = qvel[d + 3:d + 6]
    a_lin = rot.T @ qacc[d:d + 3] - np.cross(omega, v_lin)
    pose = np.array([*pos, x, y, z, w])
    return pose, np.concatenate([v_lin, omega]), np.concatenate([a_lin, qacc[d + 3:d + 6]])


def wrench_in_frame_of(placement, wrench_world: np.ndarray) -> np.ndarray:
    """A world wrench at the origin moved to a frame (pinocchio ``SE3``) ``[f, n]``."""
    p = placement.translation
    rot = placement.rotation
    f, n_o = wrench_world[:3], wrench_world[3:]
    return np.concatenate([rot.T @ f, rot.T @ (n_o - np.cross(p, f))])


def track(model, data, lay: Layout, q_ref: np.ndarray, sub: int, on_sample=None,
          progress: bool = False, desc: str = 'mujoco') -> tuple:
    """Step position servos along ``q_ref`` (one row per physics step), sampling every ``sub``.

    Each sampled step records the state before the step (``qpos``, ``qvel``) and what the step
    computed from it (``qacc``, actuator forces, sensors) and every foot's contact wrench.

    Args:
        model, data: MuJoCo model and data (state already set).
        lay: :class:`Layout` of the model.
        q_ref: Servo targets (n_steps + 1, nu) [rad or m].
        sub: Physics steps per recorded sample.
        on_sample: ``f(k, data, wrenches)`` called after each sampled step (extra readings).
        progress: Show a tqdm bar.
        desc: The bar's label.

    Returns:
        (raw arrays ``qpos``, ``qvel``, ``qacc``, ``force``, ``sens``; per foot the contact
        wrench on the foot about the world origin (N, 6) [N, N.m]).
    """
    from tqdm import tqdm

    n_steps = len(q_ref) - 1
    n = n_steps // sub + 1
    raw = {k: np.zeros((n, w)) for k, w in (('qpos', model.nq), ('qvel', model.nv),
                                             ('qacc', model.nv), ('force', model.nu),
                                             ('sens', model.nsensordata))}
    wr_world = {f: np.zeros((n, 6)) for f in lay.feet}
    bar = tqdm(total=n_steps, desc=desc, unit='step', disable=not progress, mininterval=1.0)
    scratch = mujoco.MjData(model)
    acc = lay.imu_adr[2] if lay.imu_adr else None
    k = 0
    for step in range(n_steps + 1):
        data.ctrl[:] = q_ref[step]
        if step % sub == 0:
            raw['qpos'][k] = data.qpos
            raw['qvel'][k] = data.qvel
        mujoco.mj_step(model, data)
        if step % sub == 0:
            raw['qacc'][k] = data.qacc
            raw['force'][k] = data.actuator_force
            raw['sens'][k] = data.sensordata
            if acc is not None:
                raw['sens'][k][acc:acc + 3] = realized_accelerometer(
                    model, scratch, raw['qpos'][k], raw['qvel'][k], data.qvel, acc)
            wrenches = {}
            for f in lay.feet:
                wrenches[f] = wr_world[f][k] = ground_wrench_world(data, lay, f)
            if on_sample is not None:
                on_sample(k, data, wrenches)
            k += 1
        if step % 1000 == 0:
            bar.update(min(1000, n_steps - bar.n))
    bar.close()
    return raw, wr_world


def realized_accelerometer(model, scratch, qpos: np.ndarray, qvel: np.ndarray,
                           qvel_next: np.ndarray, adr: int) -> np.ndarray:
    """The accelerometer's specific force [m/s^2] (3,) of the step from ``qvel`` to
    ``qvel_next`` at ``qpos``: MuJoCo's own sensor evaluated by inverse dynamics
    (``mj_inverse``) at the acceleration the step realized, ``(qvel_next - qvel) / dt``
    (module docstring). ``scratch``: an ``MjData`` of ``model`` to compute in; ``adr``: the
    sensor's address in ``sensordata``."""
    scratch.qpos[:] = qpos
    scratch.qvel[:] = qvel
    scratch.qacc[:] = (np.asarray(qvel_next) - qvel) / model.opt.timestep
    mujoco.mj_inverse(model, scratch)
    return scratch.sensordata[adr:adr + 3].copy()


def noisy_joints_and_imu(raw: dict, lay: Layout, noise, rng) -> dict:
    """Joint and IMU readings of a run with sensor noise (encoder steps, white noise).

    Draws from ``rng`` in a fixed order (velocities, efforts, orientation, gyro,
    accelerometer), so a run and its seed give the same readings.

    Returns:
        ``q``, ``qd``, ``tau``, ``imu_quat`` ([x, y, z, w], w >= 0), ``imu_gyro``, ``imu_acc``.
    """
    from scipy.spatial.transform import Rotation

    n = raw['qpos'].shape[0]
    q = raw['qpos'][:, lay.qpos_adr]
    if noise.encoder_resolution > 0:
        q = np.round(q / noise.encoder_resolution) * noise.encoder_resolution
    qd = raw['qvel'][:, lay.dof_adr] + noise.velocity_std * rng.standard_normal((n, len(
        lay.dof_adr)))
    tau = raw['force'] + noise.effort_std * rng.standard_normal(raw['force'].shape)
    a_quat, a_gyro, a_acc = lay.imu_adr
    wxyz = raw['sens'][:, a_quat:a_quat + 4]
    rot = Rotation.from_quat(wxyz[:, [1, 2, 3, 0]])
    if noise.orientation_std > 0:
        rot = rot * Rotation.from_rotvec(noise.orientation_std * rng.standard_normal((n, 3)))
    imu_quat = rot.as_quat()
    imu_quat *= np.sign(imu_quat[:, 3:4] + 1e-12)
    gyro = raw['sens'][:, a_gyro:a_gyro + 3] + noise.gyro_std * rng.standard_normal((n, 3))
    acc = raw['sens'][:, a_acc:a_acc + 3] + noise.acc_std * rng.standard_normal((n, 3))
    return {'q': q, 'qd': qd, 'tau': tau, 'imu_quat': imu_quat, 'imu_gyro': gyro,
            'imu_acc': acc}


def qpos_from_pinocchio(q: np.ndarray, lay: Layout, nq: int) -> np.ndarray:
    """MuJoCo ``qpos`` of a pinocchio free-flyer configuration (quaternion x y z w -> w x y z)."""
    qpos = np.zeros(nq)
    a = lay.free_qpos
    qpos[a:a + 3] = q[:3]
    qpos[a + 3:a + 7] = [q[6], q[3], q[4], q[5]]
    qpos[lay.qpos_adr] = q[7:]
    return qpos
