"""``legid describe``: write a starting robot description YAML from a URDF or an MJCF.

Feet and sole rectangles from collision geometry, left/right or four-leg link groups from
mirrored names, CAD masses and COMs, primitive bodies from primitive collision shapes, and
``locked_joints`` for the joints given with ``--lock``; sole sensors at given positions and
names (``--sensor-xyz``, ``--sensor-name``), frames the URDF lacks (``--frame``). With
``--bag``, the recording's streams are mapped onto it (IMU topic, frame, mounting and heading;
each foot's force topic, frame and axes; :mod:`legid_ros.core.description.from_bag`).
``--mjcf`` takes a MuJoCo model instead of ``--urdf`` (bodies are links, geoms the shapes;
the description's ``urdf:`` then names the MJCF, which pinocchio reads).
``docs/robots.md`` tells what to check and edit afterwards.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

HEADING_SIGNIFICANCE = 2.0  # [std] an estimated IMU heading within this of 0 is not written
RIGHT_ANGLE_TOLERANCE_DEG = 2.0  # [deg] an estimated IMU mounting this near right angles is
# taken at right angles


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``legid describe``."""
    model = parser.add_mutually_exclusive_group(required=True)
    model.add_argument('--urdf', help='URDF file of the robot')
    model.add_argument('--mjcf', help='MJCF file (MuJoCo XML) of the robot, instead of --urdf')
    parser.add_argument('--feet', required=True,
                        help='foot links, comma-separated (e.g. l_foot,r_foot)')
    parser.add_argument('--lock', action='append', default=[], metavar='JOINT=VALUE',
                        help='lock a joint at a value [rad or m] (repeat; JOINT may be a glob '
                             'such as "arm_*=0")')
    parser.add_argument('--name', help='robot name (default: the model file name)')
    parser.add_argument('--corner-sensors', action='store_true',
                        help='list four force sensors at the corners of each flat sole')
    parser.add_argument('--fsr-topic', default=None, metavar='PATTERN',
                        help='topic of corner sensor k of a foot, with {foot} and {k} '
                             '(implies --corner-sensors; default {foot}_foot/fsr/sensor_{k})')
    parser.add_argument('--bag', help='rosbag2 recording: map the IMU and force topics, their '
                        'frames and conventions onto the description (see docs/robots.md)')
    parser.add_argument('--frame', action='append', default=[],
                        metavar='NAME=PARENT:X,Y,Z[:R,P,Y]',
                        help='define a frame (a sensor the URDF lacks) [m, rad]; repeat; a '
                             'frame the description would create under NAME is renamed')
    parser.add_argument('--sensor-xyz', default=None, metavar='X,Y,Z;X,Y,Z;...',
                        help='sole sensor positions in each flat foot\'s sole frame [m] '
                             '(implies --corner-sensors; default: the sole corners)')
    parser.add_argument('--sensor-name', default=None, metavar='PATTERN',
                        help='sole sensor (and frame) names with {foot} and {k} (default '
                             '{foot}_force_{k})')
    parser.add_argument('--foot-radius', type=float, default=None, metavar='R',
                        help='point feet are spheres of this radius [m] (radius_m: the CoP '
                             'follows the rolling contact; not written by default: a URDF\'s '
                             'collision sphere may not be what touches the ground)')
    parser.add_argument('--imu-rpy', default=None, metavar='R,P,Y',
                        help='IMU mounting: sensor axes in the IMU frame [rad] (with --bag and '
                             'without it: estimated from the trunk\'s tilts when over 3 deg)')
    parser.add_argument('--joint-map', action='append', default=[], metavar='BAG=URDF',
                        help='a /joint_states name for a URDF joint (repeat or comma-separate; '
                             'with --bag, names matching but for namespace, case and a _joint '
                             'affix are mapped without it)')
    parser.add_argument('--out', help='description YAML to write (default: print it)')


def _locks(items, joint_names):
    """JOINT=VALUE (JOINT may be a shell-style pattern) -> {joint: value}."""
    from fnmatch import fnmatchcase

    from legid_ros.core.errors import BadInputError

    out = {}
    for item in items:
        name, sep, value = item.partition('=')
        try:
            val = float(value)
        except ValueError:
            sep = ''
        if not sep or not name:
            raise BadInputError(f'--lock {item!r}: write JOINT=VALUE, e.g. --lock head_1_joint=0')
        hits = [j for j in joint_names if fnmatchcase(j, name)]
        if not hits:
            raise BadInputError(f'--lock {item!r}: no URDF joint matches {name!r}')
        out.update({j: val for j in hits})
    return out


def _floats(text: str, n: int, what: str):
    from legid_ros.core.errors import BadInputError

    try:
        vals = [float(x) for x in text.split(',')]
    except ValueError:
        vals = []
    if len(vals) != n:
        raise BadInputError(f'{what}: {text!r} is not {n} comma-separated numbers')
    return vals


def _points(text):
    """--sensor-xyz 'x,y,z;x,y,z' -> [[x, y, z], ...] (None when not given)."""
    if not text:
        return None
    return [_floats(p, 3, '--sensor-xyz') for p in text.split(';') if p.strip()]


def _joint_map(items) -> dict:
    """--joint-map BAG=URDF[,BAG=URDF] (repeatable) -> {bag name: URDF name}."""
    from legid_ros.core.errors import BadInputError

    out = {}
    for item in items:
        for pair in filter(None, (p.strip() for p in item.split(','))):
            bag, sep, urdf = pair.partition('=')
            if not sep or not bag or not urdf:
                raise BadInputError(f'--joint-map {pair!r}: write BAG=URDF')
            out[bag] = urdf
    return out


def _frame(item: str):
    """--frame NAME=PARENT:X,Y,Z[:R,P,Y] -> (name, {parent, xyz[, rpy]})."""
    from legid_ros.core.errors import BadInputError

    name, _, rest = item.partition('=')
    parts = rest.split(':')
    if not name or len(parts) not in (2, 3) or not parts[0]:
        raise BadInputError(f'--frame {item!r}: write NAME=PARENT:X,Y,Z[:R,P,Y] [m, rad]')
    spec = {'parent': parts[0], 'xyz': _floats(parts[1], 3, f'--frame {name}')}
    if len(parts) == 3:
        spec['rpy'] = _floats(parts[2], 3, f'--frame {name}')
    return name, spec


def _by_load(desc: dict, bag, facts, frames, user_frames) -> list:
    """When the force topics' names do not name the feet: map them by which foot is loaded
    when (:func:`legid_ros.core.description.from_bag.assign_by_load`); the warnings."""
    import tempfile

    import yaml

    from legid_ros.bag.recording_io import read_bag
    from legid_ros.core.description.check import WRENCH_TYPE
    from legid_ros.core.description.from_bag import assign_by_load, set_wrench_topic
    from legid_ros.core.errors import LegidError
    from legid_ros.core.robot import load_robot

    if desc.get('force_sensing') == 'wrench':
        return []  # every foot named by its topic
    topics = {t: (tf.stamps_s, tf.force_norm) for t, tf in facts.topics.items()
              if tf.msgtype == WRENCH_TYPE and tf.force_norm.size > 1}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / 'described.yaml'
        path.write_text(yaml.safe_dump(desc))
        try:
            robot = load_robot(path)
            chosen = assign_by_load(robot, read_bag(bag, robot), topics)
        except LegidError as exc:
            return [f'feet: force topics not mapped by load ({exc})']
    if not chosen:
        return []
    out = []
    for foot, topic in chosen.items():
        out += set_wrench_topic(desc, foot, topic, facts, frames, user_frames)
    desc['force_sensing'] = 'wrench'
    return out + ['feet: the force topics name no foot: mapped by which foot is loaded when ('
                  + ', '.join(f'{f} {t}' for f, t in chosen.items()) + '): check them']


def _read_described(desc: dict, bag):
    """(robot, recording) of ``bag`` read with the description ``desc`` as it stands."""
    import tempfile

    import yaml

    from legid_ros.bag.recording_io import read_bag
    from legid_ros.core.robot import load_robot

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / 'described.yaml'
        path.write_text(yaml.safe_dump(desc))
        robot = load_robot(path)
        return robot, read_bag(bag, robot)


def _right_angles(rpy, tolerance_deg: float = RIGHT_ANGLE_TOLERANCE_DEG):
    """The mounting at right angles (roll, pitch, yaw [rad]: a signed permutation of the
    axes) within ``tolerance_deg`` of the rotation ``rpy`` [rad], or None. Most IMUs are
    mounted so; the estimate from the trunk's tilts is a few tenths of a degree off (0.2 deg
    on a Solo12 run turned 90 deg, enough to move the determined ZMP-row combinations by 0.7
    of their std)."""
    import numpy as np
    from scipy.spatial.transform import Rotation

    rot = Rotation.from_euler('xyz', rpy).as_matrix()
    snap = np.round(rot)
    if not (np.allclose(snap @ snap.T, np.eye(3)) and np.linalg.det(snap) > 0):
        return None
    turn = Rotation.from_matrix(snap.T @ rot).magnitude()
    if np.degrees(turn) > tolerance_deg:
        return None
    return Rotation.from_matrix(snap).as_euler('xyz')


def _rounded(values, digits: int) -> list:
    """Floats rounded for the YAML (``+ 0.0``: no ``-0.0``)."""
    return [round(float(x), digits) + 0.0 for x in values]


def _mounting_from_data(desc: dict, robot, rec, facts) -> list:
    """Set ``imu.rpy`` when the trunk's tilts show the described mounting more than
    ``IMU_ANGLE_MAX_DEG`` off (the rotation ``legid check`` would name; at right angles when
    it is that near them); returns the warning lines (none when left as it is)."""
    from legid_ros.core.conventions.consistency import IMU_ANGLE_MAX_DEG, proposed_imu_rpy
    from legid_ros.core.description.check import force_source

    found = proposed_imu_rpy(robot, rec, force_source(robot, facts).source)
    if found is None or found[0] <= IMU_ANGLE_MAX_DEG:
        return []
    angle, rpy = found
    square = _right_angles(rpy)
    desc['imu']['rpy'] = _rounded(rpy, 4) if square is None else _rounded(square, 6)
    how = '' if square is None else \
        f', the nearest mounting at right angles to the estimate {_rounded(rpy, 4)}'
    return [f'imu.rpy: {desc["imu"]["rpy"]} rad{how}, estimated from the trunk\'s tilts (the '
            f'IMU\'s up followed the feet\'s ground normal turned by {angle:.0f} deg): check '
            'it, or give --imu-rpy']


def _from_data(desc: dict, bag, facts, rpy_given: bool) -> list:
    """What the bag's samples say of the IMU: its mounting ``imu.rpy`` when not given
    (:func:`_mounting_from_data`), then ``imu.heading_rad`` when a foot's forces are in world
    axes (the yaw that balances the moments at rest; written only when it is more than
    ``HEADING_SIGNIFICANCE`` of its std from 0); returns the warning lines. The bag is
    read only when there is something to estimate, and again only when the mounting changed
    and the heading needs it."""
    from legid_ros.core.conventions.heading import heading_estimate
    from legid_ros.core.errors import LegidError

    world = 'imu' in desc and any(f.get('expressed_in') == 'world'
                                  for f in desc['feet'].values())
    if 'imu' not in desc or (rpy_given and not world):
        return []
    out = []
    try:
        robot, rec = _read_described(desc, bag)
        if not rpy_given:
            out = _mounting_from_data(desc, robot, rec, facts)
            if out and world:  # the recording as the mounting found reads it
                robot, rec = _read_described(desc, bag)
        if not world:
            return out
        est = heading_estimate(robot, rec)
    except LegidError as exc:
        return out + [f'imu: mounting and heading not estimated from the data ({exc})']
    if est is None:
        return out + ['imu.heading_rad: not estimated (no rest, or no horizontal force): 0 '
                      'assumed']
    turn, std = est
    if std < float('inf') and abs(turn) <= HEADING_SIGNIFICANCE * std:  # no other world seen
        return out + [f'imu.heading_rad: 0 kept: the moments at rest give {turn:+.4f} +- '
                      f'{std:.4f} rad, not told from 0 (the forces\' world taken as the '
                      'IMU\'s): check it']
    desc['imu']['heading_rad'] = round(float(turn), 4)
    return out + [f'imu.heading_rad: {turn:.4f} +- {std:.4f} rad, the yaw of the IMU\'s '
                  'reference in the forces\' world that balances the moments at rest: check it']


def run(args: argparse.Namespace) -> int:
    """Write (or print) the description; warnings go to stderr."""
    from legid_ros.core.atomic_files import write_text
    from legid_ros.core.description.build import first_joint
    from legid_ros.core.description.model_file import is_mjcf, load_model
    from legid_ros.core.description.generate import DEFAULT_FSR_TOPIC, describe_urdf
    from legid_ros.core.description.from_bag import add_frame, map_streams, refused_topic
    from legid_ros.core.description.spec import foot_radius
    from legid_ros.core.description.writer import description_yaml
    from legid_ros.core.errors import BadInputError

    flag = '--mjcf' if getattr(args, 'mjcf', None) else '--urdf'
    urdf = Path(args.mjcf if flag == '--mjcf' else args.urdf)
    if not urdf.is_file():
        raise FileNotFoundError(f'{flag[2:].upper()} not found: {urdf}')
    if is_mjcf(urdf) != (flag == '--mjcf'):
        kind, other = ('an MJCF', '--mjcf') if flag == '--urdf' else ('a URDF', '--urdf')
        raise BadInputError(f'{flag} {urdf}: the file is {kind} (its root element): give it '
                            f'with {other}')
    model = load_model(urdf, False)
    locks = _locks(args.lock, list(model.names)[first_joint(model):])
    feet = [f.strip() for f in args.feet.split(',') if f.strip()]
    pattern = args.fsr_topic or DEFAULT_FSR_TOPIC
    why = refused_topic(pattern.format(foot='left', k=0))
    if why:
        raise BadInputError(f'--fsr-topic {pattern!r}: a live ROS 2 node would refuse its '
                            f'topics ({why}); write e.g. {{foot}}_foot/fsr/sensor_{{k}}')
    xyz = _points(args.sensor_xyz)
    result = describe_urdf(urdf, feet, locks, name=args.name,
                           corner_sensors=args.corner_sensors or bool(args.fsr_topic)
                           or xyz is not None, fsr_topic=pattern, sensor_xyz=xyz,
                           sensor_name=args.sensor_name)
    frames = [f.name for f in model.frames]
    for item in args.frame:
        result.warnings.extend(add_frame(result.description, *_frame(item), frames))
    radius = getattr(args, 'foot_radius', None)
    if radius is not None:
        foot_radius({'radius_m': radius}, '--foot-radius')  # the description's own rule
        for foot in result.description['feet'].values():
            if foot.get('contact') == 'point':
                foot['radius_m'] = radius
    if getattr(args, 'joint_map', None) and not args.bag:
        result.description['joint_name_map'] = _joint_map(args.joint_map)
    if args.bag:
        from legid_ros.commands.check import _facts
        rpy = [float(x) for x in args.imu_rpy.split(',')] if args.imu_rpy else None
        facts = _facts(args.bag)
        result.warnings.extend(map_streams(result.description, facts, frames, rpy,
                                           [_frame(item)[0] for item in args.frame],
                                           _joint_map(getattr(args, 'joint_map', []))))
        result.warnings.extend(_by_load(result.description, args.bag, facts, frames,
                                        [_frame(item)[0] for item in args.frame]))
        result.warnings.extend(_from_data(result.description, args.bag, facts,
                                          rpy is not None))
    command = ['legid', 'describe', flag, urdf.name, '--feet', args.feet]
    for item in args.lock:
        command += ['--lock', item]
    for item in args.frame:
        command += ['--frame', item]
    for item in getattr(args, 'joint_map', []):
        command += ['--joint-map', item]
    for flag, value in (('--name', args.name), ('--fsr-topic', args.fsr_topic),
                        ('--sensor-xyz', args.sensor_xyz), ('--sensor-name', args.sensor_name),
                        ('--bag', args.bag), ('--imu-rpy', args.imu_rpy),
                        ('--foot-radius', None if radius is None else f'{radius:g}')):
        command += [flag, value] if value else []
    command += ['--corner-sensors'] if args.corner_sensors else []
    text = description_yaml(result, shlex.join(command))
    for line in result.warnings:
        print(f'legid describe: warning: {line}', file=sys.stderr)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_text(out, text)
        print(f'wrote {out}: {len(result.description["feet"])} feet, '
              f'{len(result.description["link_groups"])} link groups, '
              f'{len(result.description.get("locked_joints", {}))} locked joints')
    else:
        print(text, end='')
    return 0
