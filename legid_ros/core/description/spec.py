"""What a description YAML says about feet, force sensors, link groups and extra frames.

Plain data parsed and checked key by key; nothing here needs the model. The frames these
entries name are checked against the model in :mod:`legid_ros.core.description.build`.

Keys read here (all optional but ``feet.<foot>.link``)::

    frames:                     # frames the URDF lacks: parent frame + pose in it
      l_sole: {parent: l_foot, xyz: [0, 0, -0.1], rpy: [0, 0, 0]}   # [m], [rad]
    feet:
      left:
        link: l_foot
        sole_frame: l_sole
        contact: flat           # flat (6-D sole contact) or point; default: flat when
                                # sole_size_m is given, else point
        radius_m: 0.016         # point feet: the foot is a sphere of this radius whose bottom
                                # is sole_frame with the sole's z up, centre radius_m along z;
                                # it rolls: the contact moves radius * sin(tilt) [m]
        expressed_in: sensor    # axes of the wrench topic's values: sensor, foot or world
        frame_id: l_ankle_ft    # header frame id of the wrench topic in the bag
        force_sensors:          # any topic names; a sensor is a frame or a position
          - {topic: left_foot/fsr/0, frame: l_sole_fl}
          - {topic: left_foot/fsr/1, xyz: [0.06, -0.05, 0.0]}   # in the sole frame [m]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

from legid_ros.core.conventions.spec import default_frame_id, parse_expressed_in
from legid_ros.core.description.errors import DescriptionKeyError, suggest

FOOT_KEYS = ('link', 'sole_frame', 'ft_frame', 'sole_size_m', 'sensor_frames', 'wrench_topic',
             'fsr_topic_prefix', 'ankle_ft_topic', 'force_sensors', 'contact', 'expressed_in',
             'frame_id', 'radius_m')
CONTACTS = ('flat', 'point')


@dataclass(frozen=True)
class FrameSpec:
    """A frame defined in the description.

    Attributes:
        name: Frame name.
        parent: Frame it is fixed to (URDF link, joint or another description frame).
        xyz: Position in the parent frame [m].
        rpy: Roll, pitch, yaw of its axes in the parent frame [rad].
        key: Description key that defined it (for errors).
    """

    name: str
    parent: str
    xyz: tuple
    rpy: tuple
    key: str


@dataclass(frozen=True)
class ForceSensor:
    """One foot force sensor (sole pressure cell, load cell, ...).

    Attributes:
        name: Sensor name (``<foot>_force_<k>`` unless given).
        topic: Its WrenchStamped topic (any name; ``force.z`` = normal force [N]).
        frame: Frame at the sensor.
    """

    name: str
    topic: str
    frame: str


@dataclass
class Foot:
    """One foot of a robot, as named in the description YAML.

    Attributes:
        name: Foot name ('left', 'right', 'lf', ...).
        link: URDF link of the foot.
        sole_frame: Frame at the sole centre, z up.
        ft_frame: Frame of the 6-axis force/torque sensor, if any.
        sole_size: Sole length (x) and width (y) [m], if the foot has a sole.
        sensor_frames: Frames of the sole pressure sensors (corners).
        wrench_topic: Topic of the foot's WrenchStamped: ground-on-foot wrench at ``ft_frame``.
        fsr_topic_prefix: Prefix of the per-sensor WrenchStamped topics (used when the
            description lists no ``force_sensors``: ``<prefix>/sensor_<k>``).
        ankle_ft_topic: Topic of the raw ankle F/T reading (WrenchStamped at ``ft_frame``: the
            wrench the leg exerts on the foot [N, N.m], which in swing weighs the foot).
            Description key ``ankle_ft_topic``; default ``<wrench_topic>_raw``; None when the
            description sets it to null (no raw topic).
        force_sensors: The foot's force sensors, one topic and frame each, in the order of
            ``sensor_frames``.
        contact: 'flat' (sole, 6-D contact wrench) or 'point' (3-D force at the foot frame).
        expressed_in: Axes of ``wrench_topic``'s values in the bag: 'sensor' (``ft_frame``,
            else the link), 'foot' (the link) or 'world' (z up); the recording read from a bag
            has them in the F/T frame's axes (:mod:`legid_ros.core.conventions.convert`).
        frame_id: Header frame id of ``wrench_topic`` in the bag.
        radius: A point foot's sphere radius [m] (description key ``radius_m``, default 0):
            the sphere's centre is ``radius`` along the sole frame's z axis from its origin
            and its contact with the ground is the centre less ``radius`` along the world's
            vertical, ``radius * sin(tilt)`` from the sole frame as the leg tilts.
    """

    name: str
    link: str
    sole_frame: str
    ft_frame: Optional[str] = None
    sole_size: Optional[np.ndarray] = None  # [m]
    sensor_frames: List[str] = field(default_factory=list)
    wrench_topic: str = ''
    fsr_topic_prefix: str = ''
    ankle_ft_topic: Optional[str] = None
    force_sensors: List[ForceSensor] = field(default_factory=list)
    contact: str = 'flat'
    expressed_in: str = 'sensor'
    frame_id: str = ''
    radius: float = 0.0  # [m]

    @property
    def wrench_frame(self) -> str:
        """Frame the foot's wrench refers to (origin and, internally, axes): ``ft_frame``,
        else the foot link."""
        return self.ft_frame or self.link

    @property
    def fsr_topics(self) -> List[str]:
        """Topic of each force sensor, in sensor order (no leading slash added)."""
        return [s.topic for s in self.force_sensors]


@dataclass
class LinkGroup:
    """Links sharing one entry of the ZMP reduced set (Wu & Gao 2021): axial COM and mass.

    Attributes:
        name: Group name ('trunk', 'thigh', ...).
        links: URDF links in the group.
        axis: Unit vector of the link axis in the link frame.
        lc_cad: CAD COM offset along the axis [m].
        mass_cad: CAD mass of one link [kg].
        com_cad: CAD COM of the first link in its frame [m] (key ``com_cad_m``), if given.
    """

    name: str
    links: List[str]
    axis: np.ndarray
    lc_cad: float  # [m]
    mass_cad: float  # [kg]
    com_cad: Optional[np.ndarray] = None  # [m]


def _mapping(desc: dict, key: str, path: Optional[str]) -> dict:
    value = desc.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DescriptionKeyError(key, f'is a {type(value).__name__}, not a mapping',
                                  f'write it as "{key}: {{name: ...}}"', path)
    return value


def finite_vector(value, key: str, size: int, path: Optional[str] = None,
                  default=None) -> tuple:
    """``size`` finite numbers from a YAML value (``default`` when None), else an error."""
    if value is None and default is not None:
        return tuple(default)
    try:
        vec = np.asarray(value, float).reshape(-1)
    except (TypeError, ValueError):
        vec = np.zeros(0)
    if vec.size != size or not np.all(np.isfinite(vec)):
        raise DescriptionKeyError(key, f'{value!r} is not {size} finite number(s)',
                                  'write one number' if size == 1 else
                                  f'write a list like [{", ".join(["0.0"] * size)}]', path)
    return tuple(float(x) for x in vec)


def parse_frames(desc: dict, path: Optional[str] = None) -> List[FrameSpec]:
    """The ``frames:`` entries (parent frame + ``xyz`` [m] + ``rpy`` [rad])."""
    out = []
    for name, spec in _mapping(desc, 'frames', path).items():
        key = f'frames.{name}'
        if not isinstance(spec, dict) or 'parent' not in spec:
            raise DescriptionKeyError(key, 'has no parent frame',
                                      f'write "{name}: {{parent: LINK, xyz: [x, y, z], '
                                      'rpy: [r, p, y]}"', path)
        unknown = set(spec) - {'parent', 'xyz', 'rpy'}
        if unknown:
            raise DescriptionKeyError(f'{key}.{sorted(unknown)[0]}', 'is not a frame key',
                                      'use parent, xyz [m] and rpy [rad]', path)
        out.append(FrameSpec(name=str(name), parent=str(spec['parent']),
                             xyz=finite_vector(spec.get('xyz'), f'{key}.xyz', 3, path, (0, 0, 0)),
                             rpy=finite_vector(spec.get('rpy'), f'{key}.rpy', 3, path, (0, 0, 0)),
                             key=key))
    return out


def _sensors(name: str, f: dict, sole_frame: str, path: Optional[str]):
    """(force sensors, frames they need) of one foot."""
    key = f'feet.{name}.force_sensors'
    raw = f.get('force_sensors')
    if raw is None:
        prefix = str(f.get('fsr_topic_prefix', f'{name}_foot/fsr'))
        frames = [str(s) for s in f.get('sensor_frames') or []]
        return [ForceSensor(name=fr, topic=f'{prefix}/sensor_{k}', frame=fr)
                for k, fr in enumerate(frames)], []
    if not isinstance(raw, list):
        raise DescriptionKeyError(key, 'is not a list', 'write one "- {topic: T, frame: F}" '
                                  'or "- {topic: T, xyz: [x, y, z]}" per sensor', path)
    sensors, frames = [], []
    for k, s in enumerate(raw):
        skey = f'{key}[{k}]'
        if not isinstance(s, dict) or 'topic' not in s:
            raise DescriptionKeyError(skey, 'has no topic', 'write "{topic: T, frame: F}"', path)
        if ('frame' in s) == ('xyz' in s):
            raise DescriptionKeyError(skey, 'needs exactly one of frame or xyz',
                                      'name an existing frame, or give xyz in the sole '
                                      'frame [m]', path)
        sname = str(s.get('name', f'{name}_force_{k}'))
        frame = str(s.get('frame', sname))
        if 'xyz' in s:
            frames.append(FrameSpec(name=frame, parent=sole_frame,
                                    xyz=finite_vector(s['xyz'], f'{skey}.xyz', 3, path),
                                    rpy=(0.0, 0.0, 0.0), key=skey))
        sensors.append(ForceSensor(name=sname, topic=str(s['topic']), frame=frame))
    if f.get('sensor_frames') is not None:
        raise DescriptionKeyError(f'feet.{name}.sensor_frames', 'is given with force_sensors',
                                  'keep force_sensors only (each has its frame)', path)
    return sensors, frames


def parse_feet(desc: dict, path: Optional[str] = None):
    """(feet by name, frames their force sensors define) from ``feet:``."""
    feet, frames = {}, []
    for name, f in _mapping(desc, 'feet', path).items():
        key = f'feet.{name}'
        if not isinstance(f, dict) or 'link' not in f:
            raise DescriptionKeyError(f'{key}.link', 'is missing',
                                      f'write "{name}: {{link: FOOT_LINK}}"', path)
        for k in f:
            if k not in FOOT_KEYS:
                raise DescriptionKeyError(f'{key}.{k}', 'is not a foot key',
                                          suggest(k, FOOT_KEYS, 'foot keys'), path)
        size = f.get('sole_size_m')
        contact = str(f.get('contact', 'flat' if size is not None else 'point'))
        if contact not in CONTACTS:
            raise DescriptionKeyError(f'{key}.contact', f'{contact!r} is not a contact type',
                                      'write flat or point', path)
        if contact == 'flat' and size is None:
            raise DescriptionKeyError(f'{key}.sole_size_m', 'is missing for a flat foot',
                                      'give [length, width] in m, or set contact: point', path)
        radius = foot_radius(f, f'{key}.radius_m', contact, path)
        sole = str(f.get('sole_frame', f['link']))
        sensors, sframes = _sensors(str(name), f, sole, path)
        frames += sframes
        wrench_topic = f.get('wrench_topic', f'{name}_foot/wrench')
        raw_topic = f.get('ankle_ft_topic', f'{wrench_topic}_raw')
        expressed = parse_expressed_in(f, key, path)
        feet[str(name)] = Foot(
            name=str(name), link=str(f['link']), sole_frame=sole, ft_frame=f.get('ft_frame'),
            sole_size=None if size is None else np.asarray(
                finite_vector(size, f'{key}.sole_size_m', 2, path), float),
            sensor_frames=[s.frame for s in sensors], wrench_topic=str(wrench_topic),
            fsr_topic_prefix=str(f.get('fsr_topic_prefix', f'{name}_foot/fsr')),
            ankle_ft_topic=None if raw_topic is None else str(raw_topic),
            force_sensors=sensors, contact=contact, expressed_in=expressed,
            frame_id=str(f.get('frame_id', default_frame_id(expressed, f.get('ft_frame'),
                                                            str(f['link'])))),
            radius=radius)
    return feet, frames


def foot_radius(f: dict, key: str, contact: str = 'point', path: Optional[str] = None) -> float:
    """A point foot's ``radius_m`` [m] from its entry ``f`` (0 when absent).

    Raises:
        DescriptionKeyError: On a flat foot, not a number, or outside 0-0.1 m, naming ``key``
            (the value's full key, e.g. ``feet.lf.radius_m``).
    """
    if 'radius_m' not in f:
        return 0.0
    if contact != 'point':
        raise DescriptionKeyError(key, 'is for point feet',
                                  'remove it, or set contact: point', path)
    r = finite_vector([f['radius_m']], key, 1, path)[0]
    if not 0.0 <= r <= 0.1:
        raise DescriptionKeyError(key, f'{r!r} is not a sphere radius',
                                  'give the foot sphere\'s radius in m (0 to 0.1)', path)
    return float(r)


def parse_link_groups(desc: dict, path: Optional[str] = None) -> Dict[str, LinkGroup]:
    """The ``link_groups:`` entries (reduced set of Wu & Gao 2021)."""
    groups = {}
    for name, g in _mapping(desc, 'link_groups', path).items():
        key = f'link_groups.{name}'
        for k in ('links', 'axis', 'lc_cad_m', 'mass_cad_kg'):
            if not isinstance(g, dict) or k not in g:
                raise DescriptionKeyError(f'{key}.{k}', 'is missing',
                                          'give links, axis, lc_cad_m and mass_cad_kg', path)
        axis = np.asarray(finite_vector(g['axis'], f'{key}.axis', 3, path), float)
        if np.linalg.norm(axis) == 0:
            raise DescriptionKeyError(f'{key}.axis', 'is zero', 'give a non-zero vector', path)
        com = g.get('com_cad_m')
        groups[str(name)] = LinkGroup(
            name=str(name), links=[str(x) for x in g['links']], axis=axis / np.linalg.norm(axis),
            lc_cad=float(g['lc_cad_m']), mass_cad=float(g['mass_cad_kg']),
            com_cad=None if com is None else np.asarray(
                finite_vector(com, f'{key}.com_cad_m', 3, path), float))
    return groups
