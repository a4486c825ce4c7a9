"""The description keys of a recording's sensor streams (topic, frame, convention).

Keys read here (all optional; defaults give the internal convention)::

    imu:
      topic: /imu/data          # sensor_msgs/Imu topic (default /imu)
      frame: imu_link           # model frame the IMU is fixed to (default imu_frame, else
                                # base_link)
      frame_id: imu             # header frame_id in the bag (default: frame)
      rpy: [0, 0, 1.5708]       # sensor axes in ``frame`` (mounting rotation) [rad]
      heading_rad: 0.3          # yaw of the IMU's reference (its "world") in the world the
                                # foot forces are expressed in, at the first sample [rad]
      heading_drift_rad_s: 0.0  # drift of that yaw (an IMU without magnetometer) [rad/s]
    feet:
      lf:
        expressed_in: world     # axes of the foot's forces: sensor (ft_frame, default),
                                # foot (the foot link) or world (z up); moments about
                                # ft_frame's origin
        frame_id: world         # header frame_id in the bag (default: ft_frame or link for
                                # sensor, the link for foot, 'world' for world)

The foot keys are parsed with the rest of the foot in
:func:`legid_ros.core.description.spec.parse_feet`; the IMU here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pinocchio as pin

from legid_ros.core.description.errors import DescriptionKeyError, suggest

IMU_KEYS = ('topic', 'frame', 'frame_id', 'rpy', 'heading_rad', 'heading_drift_rad_s')
EXPRESSED_IN = ('sensor', 'foot', 'world')
DEFAULT_IMU_TOPIC = '/imu'
IMU_TYPE = 'sensor_msgs/msg/Imu'
WRENCH_TYPE = 'geometry_msgs/msg/WrenchStamped'


@dataclass(frozen=True)
class ImuSpec:
    """The IMU stream.

    Attributes:
        topic: Absolute topic name.
        frame: Model frame the IMU is fixed to.
        frame_id: Header frame id of its messages.
        rpy: Sensor axes in ``frame``: roll, pitch, yaw [rad].
        heading_rad: Yaw of the IMU's reference frame in the force world at the first
            sample [rad].
        heading_drift_rad_s: Drift of that yaw [rad/s].
    """

    topic: str = DEFAULT_IMU_TOPIC
    frame: str = 'trunk'
    frame_id: str = 'trunk'
    rpy: tuple = (0.0, 0.0, 0.0)
    heading_rad: float = 0.0
    heading_drift_rad_s: float = 0.0

    @property
    def rotation(self) -> np.ndarray:
        """Sensor axes in ``frame`` (3, 3)."""
        return pin.rpy.rpyToMatrix(*self.rpy)

    @property
    def is_internal(self) -> bool:
        """Whether its readings need no conversion (axes of ``frame``, heading 0)."""
        return not any(self.rpy) and self.heading_rad == 0.0 and self.heading_drift_rad_s == 0.0

    def heading(self, t_s=None):
        """Yaw of the IMU's reference [rad] at times ``t_s`` [s] after the first sample (an
        array; the constant heading without times)."""
        if t_s is None or self.heading_drift_rad_s == 0.0:
            return self.heading_rad
        return self.heading_rad + self.heading_drift_rad_s * np.asarray(t_s, float)


def abs_topic(name: str) -> str:
    """``name`` with a leading slash."""
    return name if name.startswith('/') else '/' + name


def _number(value, key: str, path: Optional[str]) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        out = float('nan')
    if not np.isfinite(out):
        raise DescriptionKeyError(key, f'{value!r} is not a finite number', 'write one number',
                                  path)
    return out


def parse_imu(desc: dict, path: Optional[str] = None) -> ImuSpec:
    """The ``imu:`` entry (with the older top-level ``imu_frame``)."""
    from legid_ros.core.description.spec import finite_vector

    raw = desc.get('imu') or {}
    if not isinstance(raw, dict):
        raise DescriptionKeyError('imu', f'is a {type(raw).__name__}, not a mapping',
                                  'write "imu: {topic: /imu, frame: LINK}"', path)
    for k in raw:
        if k not in IMU_KEYS:
            raise DescriptionKeyError(f'imu.{k}', 'is not an IMU key',
                                      suggest(k, IMU_KEYS, 'IMU keys'), path)
    if 'frame' in raw and 'imu_frame' in desc and str(raw['frame']) != str(desc['imu_frame']):
        raise DescriptionKeyError('imu.frame', f'{raw["frame"]!r} differs from imu_frame '
                                  f'{desc["imu_frame"]!r}', 'keep one of them', path)
    frame = str(raw.get('frame', desc.get('imu_frame', desc.get('base_link', 'trunk'))))
    return ImuSpec(topic=abs_topic(str(raw.get('topic', DEFAULT_IMU_TOPIC))), frame=frame,
                   frame_id=str(raw.get('frame_id', frame)),
                   rpy=finite_vector(raw.get('rpy'), 'imu.rpy', 3, path, (0, 0, 0)),
                   heading_rad=_number(raw.get('heading_rad', 0.0), 'imu.heading_rad', path),
                   heading_drift_rad_s=_number(raw.get('heading_drift_rad_s', 0.0),
                                               'imu.heading_drift_rad_s', path))


def parse_expressed_in(f: dict, key: str, path: Optional[str]) -> str:
    """A foot's ``expressed_in`` (checked)."""
    value = str(f.get('expressed_in', 'sensor'))
    if value not in EXPRESSED_IN:
        raise DescriptionKeyError(f'{key}.expressed_in', f'{value!r} is not a frame kind',
                                  'write sensor, foot or world', path)
    return value


def default_frame_id(expressed_in: str, ft_frame: Optional[str], link: str) -> str:
    """The header frame id a foot's wrench carries by default."""
    return {'sensor': ft_frame or link, 'foot': link, 'world': 'world'}[expressed_in]
