"""Settings and window channel schema of the buffer (:mod:`.sensor_buffer`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Sequence

from legid_ros.core.errors import BadInputError

IMU_CHANNELS = ('imu.qx', 'imu.qy', 'imu.qz', 'imu.qw', 'imu.wx', 'imu.wy', 'imu.wz',
                'imu.ax', 'imu.ay', 'imu.az')
WRENCH_AXES = ('fx', 'fy', 'fz', 'tx', 'ty', 'tz')
BASE_CHANNELS = ('base.x', 'base.y', 'base.z', 'base.qx', 'base.qy', 'base.qz', 'base.qw')
#: Support foot index (in the description's foot order), the support sole's anchor in the world
#: [m], the total measured normal force [N] and the support sole's heading in the world [rad]
#: (the support-sole frame the estimator works in is the world shifted by the anchor and turned
#: by that heading; see :mod:`legid_ros.core.buffer.kinematics`).
SUPPORT_CHANNELS = ('support', 'anchor.x', 'anchor.y', 'fz', 'anchor.yaw')
LABEL_PREFIX = 'channels:'
#: Prefix of the raw ankle F/T channels ``ankle_ft.<foot>.<axis>`` (leg-on-foot wrench in the
#: foot's F/T frame [N, N.m]; NaN where no fresh reading). They come last, so windows without
#: them keep every other column where it was.
ANKLE_FT_PREFIX = 'ankle_ft'


@dataclass
class BufferConfig:
    """Settings of the streaming buffer.

    Attributes:
        joint_names: Joint names in column order.
        feet: Foot names.
        force_mode: 'wrench' (one 6-axis wrench per foot) or 'fsr' (sole sensors).
        fsr_count: Number of sole sensors per foot (fsr mode).
        length: Window length [samples].
        hop: Rows between two windows [samples] (<= length, so no row is skipped).
        max_delay_s: How long a joint-state row waits for the other streams [s].
        reorder_s: How long a row waits for earlier joint states arriving late [s].
        stale_after_s: A held stream older than this makes the row not ok [s].
        jump_back_s: A stamp this much earlier than the newest one is a clock jump [s].
        gap_s: Joint states this far apart start a new segment (filters restart, no window
            spans the gap) [s].
        velocity_cutoff_hz: First-order lag cutoff on joint velocities [Hz] (0 = off).
        acceleration_cutoff_hz: Cutoff on joint accelerations [Hz] (0 = off).
        zmp_cutoff_hz: Cutoff on the measured ZMP [Hz] (0 = off; the inertial
            filter of Wu & Gao 2021).
        history: Samples kept per auxiliary stream.
        ankle_ft_feet: Feet whose raw ankle F/T reading is carried in the windows (channels
            ``ankle_ft.<foot>.<axis>``, [N, N.m]). Optional streams: they never hold a row back
            or make it not ok before their first sample; a missing or stale reading is NaN.
    """

    joint_names: List[str]
    feet: List[str]
    force_mode: str = 'wrench'
    fsr_count: Dict[str, int] = field(default_factory=dict)
    length: int = 200
    hop: int = 100
    max_delay_s: float = 0.02
    reorder_s: float = 0.002
    stale_after_s: float = 0.05
    jump_back_s: float = 0.5
    gap_s: float = 0.1
    velocity_cutoff_hz: float = 50.0
    acceleration_cutoff_hz: float = 20.0
    zmp_cutoff_hz: float = 20.0
    history: int = 512
    ankle_ft_feet: List[str] = field(default_factory=list)

    def __post_init__(self):
        if self.force_mode not in ('wrench', 'fsr'):
            raise BadInputError(f'force_mode must be wrench or fsr, not {self.force_mode!r}')
        if not 0 < self.hop <= self.length:
            raise BadInputError(f'need 0 < hop <= length, got hop={self.hop}, '
                                f'length={self.length}')
        if self.force_mode == 'fsr' and any(self.fsr_count.get(f, 0) < 1 for f in self.feet):
            raise BadInputError('fsr mode needs at least one sole sensor per foot')
        unknown = [f for f in self.ankle_ft_feet if f not in self.feet]
        if unknown or len(set(self.ankle_ft_feet)) != len(self.ankle_ft_feet):
            raise BadInputError(f'ankle_ft_feet {self.ankle_ft_feet} must be distinct feet of '
                                f'{self.feet}')


class ChannelSchema:
    """Ordered channel names of a window and their column indices."""

    def __init__(self, names: Sequence[str]):
        self.names = list(names)
        self._index = {n: i for i, n in enumerate(self.names)}
        if len(self._index) != len(self.names):
            raise BadInputError('duplicate channel names in the window schema')

    @classmethod
    def for_config(cls, cfg: BufferConfig) -> 'ChannelSchema':
        """The schema the buffer writes for ``cfg``."""
        names = ['t', 'ok']
        for kind in ('q', 'qd', 'qdd', 'tau'):
            names += [f'{kind}.{j}' for j in cfg.joint_names]
        names += list(IMU_CHANNELS)
        for foot in cfg.feet:
            if cfg.force_mode == 'wrench':
                names += [f'wrench.{foot}.{a}' for a in WRENCH_AXES]
            else:
                names += [f'fsr.{foot}.{k}' for k in range(cfg.fsr_count[foot])]
        names += ['zmp.x', 'zmp.y', 'zmp_raw.x', 'zmp_raw.y']
        names += [f'contact.{foot}' for foot in cfg.feet]
        names += list(BASE_CHANNELS)
        names += list(SUPPORT_CHANNELS)
        for foot in cfg.ankle_ft_feet:
            names += [f'{ANKLE_FT_PREFIX}.{foot}.{a}' for a in WRENCH_AXES]
        return cls(names)

    def __len__(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        """Column of a channel; raises BadInputError if absent."""
        try:
            return self._index[name]
        except KeyError as exc:
            raise BadInputError(f'window has no channel {name!r}') from exc

    def columns(self, prefix: str) -> List[int]:
        """Columns of every channel starting with ``prefix`` (schema order)."""
        return [i for i, n in enumerate(self.names) if n.startswith(prefix)]

    def suffixes(self, prefix: str) -> List[str]:
        """Channel names after ``prefix``, e.g. joint names for ``'q.'``."""
        return [n[len(prefix):] for n in self.names if n.startswith(prefix)]

    def label(self) -> str:
        """Layout label carrying the schema: ``channels:`` + comma-separated names."""
        return LABEL_PREFIX + ','.join(self.names)

    @classmethod
    def from_label(cls, label: str) -> 'ChannelSchema':
        """Parse :meth:`label` output."""
        if not label.startswith(LABEL_PREFIX):
            raise BadInputError(f'layout label does not start with {LABEL_PREFIX!r}')
        return cls(label[len(LABEL_PREFIX):].split(','))
