"""Contact state for the floating-base feedforward from the buffer's latest window row.

The buffer (:mod:`legid_ros.core.buffer`) carries, per row, the contact flag of each foot, the
foot force sensing (a 6-axis ground-on-foot wrench at the foot's F/T frame, or the normal
forces of the sole sensors) and the IMU orientation. :func:`reading_from_window` turns the
latest usable row into what :meth:`legid_ros.core.feedforward.FloatingFeedforward.
set_contacts` takes: the stance feet, their measured wrenches (sole sensors summed into a
wrench at the sole frame: ``f = (0, 0, sum f_k)``, ``n = sum p_k x (0, 0, f_k)`` with ``p_k``
the sensor's position in the sole frame) and the IMU orientation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import numpy as np

from legid_ros.core.contact.rule import ContactThresholds, contact_states
from legid_ros.core.errors import BadInputError
from legid_ros.core.robot import Robot


@dataclass
class ContactReading:
    """Measured contact state of one instant.

    Attributes:
        t: Time of the row [s] (the buffer's clock).
        stance: Feet in contact.
        wrenches: Ground-on-foot wrench per stance foot ``[f, n]`` [N, N.m] at ``frames``;
            ``None`` when the row holds no usable force reading.
        frames: Frame of each wrench.
        base_quat: IMU orientation ``[x, y, z, w]`` (``None`` if not finite).
    """

    t: float
    stance: Tuple[str, ...]
    wrenches: Optional[Dict[str, np.ndarray]]
    frames: Dict[str, str]
    base_quat: Optional[np.ndarray]


def sensor_offsets(robot: Robot) -> Dict[str, np.ndarray]:
    """Per foot, its sole sensors' positions in the sole frame [m], (k, 3)."""
    model = robot.model
    out = {}
    for name, foot in robot.feet.items():
        sole = model.frames[model.getFrameId(foot.sole_frame)].placement
        out[name] = np.array([(sole.inverse() * model.frames[model.getFrameId(s)].placement)
                              .translation for s in foot.sensor_frames]).reshape(-1, 3)
    return out


def sole_wrench(forces: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Wrench at the sole frame ``[f, n]`` [N, N.m] of sole-sensor normal forces (k,) [N]."""
    f = np.asarray(forces, float)
    total = float(f.sum())
    moment = np.array([(offsets[:, 1] * f).sum(), -(offsets[:, 0] * f).sum(), 0.0])
    return np.array([0.0, 0.0, total, *moment])


def reading_from_window(data, robot: Robot, offsets: Optional[Dict[str, np.ndarray]] = None
                        ) -> ContactReading:
    """The contact state of the latest usable row of a buffer window.

    The stance feet are the row's contact flags (the buffer's contact rule,
    :mod:`legid_ros.core.contact.rule`); a window without flags (NaN) gets the rule applied
    to its row's normal forces from an unknown state (touch-down threshold).

    Args:
        data: :class:`legid_ros.core.buffer.window.WindowData` (``unpack_window``).
        robot: The robot (feet, frames).
        offsets: :func:`sensor_offsets` of the robot (computed if not given).

    Raises:
        BadInputError: no usable row, or no foot in contact.
    """
    ok = np.flatnonzero(np.asarray(data.ok, bool))
    if ok.size == 0:
        raise BadInputError('the window has no usable row')
    r = int(ok[-1])
    offsets = offsets if offsets is not None else sensor_offsets(robot)
    wrenches, frames = {}, {}
    for f in data.feet:
        if f in data.foot_wrench:
            wrenches[f] = np.asarray(data.foot_wrench[f][r], float)
            frames[f] = robot.feet[f].wrench_frame  # where the buffer gives it
        elif f in data.fsr:
            wrenches[f] = sole_wrench(data.fsr[f][r], offsets[f])
            frames[f] = robot.feet[f].sole_frame
    flags = np.asarray(data.contact[r], float)
    if np.all(np.isfinite(flags)):
        stance = tuple(f for f, c in zip(data.feet, flags) if c > 0.5)
    else:
        fz = np.array([[wrenches[f][2] if f in wrenches else np.nan for f in data.feet]])
        on = contact_states(fz, ContactThresholds.for_robot(robot))[0]
        stance = tuple(f for f, c in zip(data.feet, on) if c)
    if not stance:
        raise BadInputError('no foot in contact in the latest window row')
    usable = all(f in wrenches and np.all(np.isfinite(wrenches[f])) for f in stance)
    quat = np.asarray(data.imu_quat[r], float)
    return ContactReading(float(data.t[r]), stance, wrenches if usable else None, frames,
                          quat if np.all(np.isfinite(quat)) and np.linalg.norm(quat) > 0.5
                          else None)


__all__ = ['ContactReading', 'reading_from_window', 'sensor_offsets', 'sole_wrench']
