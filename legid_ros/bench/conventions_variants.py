"""The setups ``legid bench conventions`` records: per robot, each variant's readout (made at
the simulator's sensor readout, :class:`legid_ros.core.sim.conventions.Readout`), the
``legid describe`` options its user gives, the methods that apply and the buffer node's
parameters, and which of issue 24's twelve conventions each covers. The IMU turned 90 deg is
described without ``--imu-rpy`` (``legid describe --bag`` takes the mounting from the trunk's
tilts); the one turned (0.1, -0.2, 1.5) rad with it, as its user would give it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Tuple

import numpy as np

from legid_ros.core.sim.conventions import Readout

CANONICAL_RATE_HZ = 200.0  # [Hz] the canonical recording's rate (the project's default)
RUN_RATE_HZ = 1000.0  # [Hz] the simulated run's readout rate, every variant's source
IMU_ON_TOPIC = {'imu_topic': '/imu/data', 'imu_frame_id': 'imu_link'}
IMU_ROT90_DRIFT = {**IMU_ON_TOPIC, 'imu_rpy': (0.0, 0.0, np.pi / 2), 'imu_heading_rad': 0.7,
                   'imu_drift_rad_s': 0.005}  # [rad], [rad/s]: 0.29 deg/s
IMU_YAWED = {**IMU_ON_TOPIC, 'imu_rpy': (0.1, -0.2, 1.5), 'imu_heading_rad': 0.7}
WORLD = {'force_topic': 'feet/{foot}/force', 'force_expressed_in': 'world'}
FOOT = {'force_topic': 'feet/{foot}/force', 'force_expressed_in': 'foot'}
NAMES = {'joint_name_format': 'robot/{lower}_joint'}
SHUFFLE = {'shuffle_joints': True}
JITTER = {'stamp_jitter_s': 0.005}  # [s]
FT_OFFSET = ((0.012, -0.008, -0.045), (0.0, 0.0, np.pi / 2))  # [m], [rad] in the ankle frame
SOLO_FT_OFFSET = ((0.0, 0.0, 0.03), (0.2, 0.0, 0.4))  # [m], [rad] in the foot link
CELLS = ((0.09, 0.05), (0.09, -0.05), (-0.08, 0.0))  # [m] three load cells in the sole frame
REORDER_S = 0.006  # [s] the buffer node's reorder_s on a setup with 5 ms arrival jitter


@dataclass(frozen=True)
class Variant:
    """One recorded setup.

    Attributes:
        readout: Its conventions at the simulator's readout.
        describe: ``legid describe`` options its user gives (argparse names -> values).
        methods: The batch methods that apply (None: all of the robot's).
        buffer: Buffer node parameters the setup needs (online part).
    """

    readout: Readout
    describe: Dict[str, object] = field(default_factory=dict)
    methods: Tuple[str, ...] = ()
    buffer: Dict[str, float] = field(default_factory=dict)


def _frames(offset, parents: Dict[str, str], name: str = '{foot}_ft_sensor') -> list:
    """--frame options placing each foot's F/T sensor frame at ``offset`` in its parent."""
    xyz, rpy = offset
    fmt = ','.join(f'{v:.6g}' for v in xyz) + ':' + ','.join(f'{v:.6g}' for v in rpy)
    return [f'{name.format(foot=f)}={p}:{fmt}' for f, p in parents.items()]


def _rpy(values) -> str:
    return ','.join(f'{v:.6g}' for v in values)


def _at(rate_hz: float = CANONICAL_RATE_HZ, **kw) -> Readout:
    return Readout(rate_hz=rate_hz, **kw)


def solo_variants(feet: Dict[str, str]) -> Dict[str, Variant]:
    """Solo12 (point feet) setups; ``feet``: foot name -> link."""
    zmp = ('zmp_newton',)
    return {
        'canonical': Variant(_at()),
        'imu_topic': Variant(_at(**IMU_ON_TOPIC)),
        'imu_rot90_drift': Variant(_at(**IMU_ROT90_DRIFT)),  # mounting from the bag
        'imu_rotated_yawed_world_forces': Variant(_at(**IMU_YAWED, **WORLD),
                                                  {'imu_rpy': _rpy(IMU_YAWED['imu_rpy'])}),
        'world_forces': Variant(_at(**WORLD)),
        'foot_axes': Variant(_at(**FOOT)),
        'ft_offset': Variant(_at(ft_offset=SOLO_FT_OFFSET),
                             {'frame': _frames(SOLO_FT_OFFSET, feet)}),
        'normal_force_only': Variant(_at(normal_only=True, force_topic='feet/{foot}/normal'),
                                     methods=zmp),
        'rate_500hz': Variant(_at(500.0)),
        'light_lifting_foot_1.5n': Variant(_at(air_force_n=1.5)),
        'joint_names_mapped': Variant(_at(**NAMES)),
        'joint_order_shuffled': Variant(_at(**SHUFFLE)),
        'stamp_jitter_5ms': Variant(_at(**JITTER), buffer={'reorder_s': REORDER_S}),
        'combined': Variant(_at(**IMU_ROT90_DRIFT, **FOOT, **NAMES, **SHUFFLE, **JITTER),
                            buffer={'reorder_s': REORDER_S}),
    }


def humanoid_variants(feet: Dict[str, str]) -> Dict[str, Variant]:
    """Talos (flat feet, sole sensors, upper body locked) setups; ``feet``: foot -> link."""
    cells = {'sensor_xyz': ';'.join(f'{x},{y},0' for x, y in CELLS),
             'sensor_name': '{foot}_cell_{k}', 'fsr_topic': '{foot}/load_cell/c{k}'}
    offset = {'frame': _frames(FT_OFFSET, feet)}
    return {
        'canonical': Variant(_at()),
        'imu_topic': Variant(_at(**IMU_ON_TOPIC)),
        'imu_rot90_drift': Variant(_at(**IMU_ROT90_DRIFT)),  # mounting from the bag
        'imu_rotated_yawed_world_forces': Variant(_at(**IMU_YAWED, **WORLD),
                                                  {'imu_rpy': _rpy(IMU_YAWED['imu_rpy'])}),
        'world_forces': Variant(_at(**WORLD)),
        'foot_axes': Variant(_at(**FOOT)),
        'ft_offset_from_ankle': Variant(_at(ft_offset=FT_OFFSET), offset),
        'sole_sensors_renamed_moved': Variant(_at(sole_sensors=CELLS), cells),
        'rate_500hz': Variant(_at(500.0)),
        'joint_names_mapped': Variant(_at(**NAMES)),
        'joint_order_shuffled': Variant(_at(**SHUFFLE)),
        'stamp_jitter_5ms': Variant(_at(**JITTER), buffer={'reorder_s': REORDER_S}),
        'combined': Variant(_at(**IMU_ROT90_DRIFT, ft_offset=FT_OFFSET, sole_sensors=CELLS,
                                **NAMES, **SHUFFLE, **JITTER),
                            {**offset, **cells},
                            buffer={'reorder_s': REORDER_S}),
    }


#: Issue 24's conventions -> the variants covering them, per robot ('solo12', 'talos').
ISSUE_VARIANTS = {
    'IMU on another topic': {'solo12': ['imu_topic'], 'talos': ['imu_topic']},
    'IMU mounted rotated 90 deg about z, with a heading offset and drift': {
        'solo12': ['imu_rot90_drift'], 'talos': ['imu_rot90_drift']},
    'forces in the world frame': {'solo12': ['world_forces'], 'talos': ['world_forces']},
    'forces in the foot frame': {'solo12': ['foot_axes'], 'talos': ['foot_axes']},
    'forces in a sensor frame offset from the ankle': {
        'solo12': ['ft_offset'], 'talos': ['ft_offset_from_ankle']},
    'sole sensors with other names and positions': {'talos': ['sole_sensors_renamed_moved']},
    'point-foot normal force only': {'solo12': ['normal_force_only']},
    'recording at 200 and 500 Hz': {'solo12': ['canonical', 'rate_500hz'],
                                    'talos': ['canonical', 'rate_500hz']},
    'a light robot whose lifting foot keeps 1-2 N': {'solo12': ['light_lifting_foot_1.5n']},
    'joint names mapped': {'solo12': ['joint_names_mapped'], 'talos': ['joint_names_mapped']},
    'joint order shuffled per message': {'solo12': ['joint_order_shuffled'],
                                         'talos': ['joint_order_shuffled']},
    '5 ms stamp jitter (arrival times; header stamps exact)': {
        'solo12': ['stamp_jitter_5ms'], 'talos': ['stamp_jitter_5ms']},
}
