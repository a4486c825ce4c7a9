"""Run-time events of a synthetic run: a payload added to the trunk, an IMU heading error.

Both serve the online estimator's figures (tracking a changed mass; rows independent of the
IMU's heading): the payload changes the true parameters in the dynamics from a given time on;
the heading error turns the IMU's reported orientation about the vertical (a magnetometer
offset, a power-on yaw, a gyro drift), leaving its rate and specific force alone.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from legid_ros.core.errors import BadInputError
from legid_ros.core.inertial import PARAMS_PER_LINK, link_index, pack, unpack
from legid_ros.core.robot import Robot

#: Height of the payload box above the trunk's centre of mass [m] and its half edges [m].
PAYLOAD_ABOVE_M = 0.05
PAYLOAD_HALF_M = (0.06, 0.06, 0.03)


def check_events(payload_kg: float, payload_at_s: float, yaw_offset_deg: float,
                 yaw_drift_deg_s: float) -> None:
    """Refuse values that cannot work (one line saying why)."""
    if not (np.isfinite(payload_kg) and payload_kg >= 0):
        raise BadInputError(f'payload_kg must be >= 0 kg, got {payload_kg}')
    if not (np.isfinite(payload_at_s) and payload_at_s >= 0):
        raise BadInputError(f'payload_at_s must be >= 0 s, got {payload_at_s}')
    if not (np.isfinite(yaw_offset_deg) and np.isfinite(yaw_drift_deg_s)):
        raise BadInputError('IMU yaw offset and drift must be finite')


def with_trunk_payload(robot: Robot, pi: np.ndarray, mass_kg: float) -> np.ndarray:
    """Parameters with a box of ``mass_kg`` [kg] fixed :data:`PAYLOAD_ABOVE_M` above the trunk's
    centre of mass (base link)."""
    from legid_ros.core.synthetic.truth import Payload, _add_payloads

    out = np.array(pi, float).copy()
    if mass_kg <= 0:
        return out
    idx = link_index(robot.model, robot.base_link)
    sl = slice(PARAMS_PER_LINK * idx, PARAMS_PER_LINK * (idx + 1))
    m, h, i_o = unpack(out[sl])
    c = h / m
    i_c = i_o - m * (c @ c * np.eye(3) - np.outer(c, c))
    box = Payload(mass_kg, tuple(c + [0.0, 0.0, PAYLOAD_ABOVE_M]), PAYLOAD_HALF_M)
    m, c, i_c = _add_payloads(m, c, i_c, (box,))
    out[sl] = pack(m, c, i_c)
    return out


def imu_heading_error(quat_xyzw: np.ndarray, t: np.ndarray, offset_deg: float,
                      drift_deg_s: float) -> np.ndarray:
    """IMU orientations turned about the world vertical by ``offset + drift (t - t0)`` [deg]."""
    if offset_deg == 0 and drift_deg_s == 0:
        return np.asarray(quat_xyzw, float).copy()
    t = np.asarray(t, float)
    yaw = np.radians(offset_deg + drift_deg_s * (t - t[0]))
    return (Rotation.from_euler('z', yaw[:, None]) * Rotation.from_quat(quat_xyzw)).as_quat()
