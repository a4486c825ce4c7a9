"""A starting description YAML from a URDF or an MJCF (``legid describe``).

Feet and soles from the collision geometry of each foot link (and the links fixed to it; an
MJCF's geoms, :mod:`legid_ros.core.description.mjcf_scan`),
left/right or four-leg link groups from mirrored link names, CAD masses and COMs from the
model file's inertials, primitive bodies from primitive collision shapes. What could not be found
is said in :attr:`Described.warnings` (and as comments in the written YAML).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy as np
import pinocchio as pin

from legid_ros.core.description.build import build_model, first_joint
from legid_ros.core.description.mirror import find_groups, layout_of, mirrored
from legid_ros.core.description.soles import Sole, body_shapes, find_sole
from legid_ros.core.description.urdf_scan import root_link, scan_model
from legid_ros.core.errors import RobotDescriptionError

PRIMITIVE = {'box': 'cuboid', 'cylinder': 'cylinder', 'sphere': 'sphere'}
DEFAULT_FSR_TOPIC = '{foot}_foot/fsr/sensor_{k}'


@dataclass
class Described:
    """A generated description.

    Attributes:
        description: The description dict (what is written as YAML).
        warnings: What the generator could not find and guessed; one line each.
    """

    description: dict
    warnings: List[str] = field(default_factory=list)


def _r(x, nd: int = 6):
    return [round(float(v), nd) for v in np.asarray(x).reshape(-1)]


def _frame_tokens(name: str) -> List[str]:
    return [t for t in name.lower().replace('-', '_').split('_') if t]


def _foot_names(links: Sequence[str]) -> List[str]:
    sides = [mirrored(link) for link in links]
    names = [m.side if m else link for m, link in zip(sides, links)]
    return names if len(set(names)) == len(names) else list(links)


def _chain(model: pin.Model, joint: int) -> List[str]:
    out = []
    while joint >= first_joint(model):
        out.append(model.names[joint])
        joint = model.parents[joint]
    return out[::-1]


def _axis(model: pin.Model, j: int, children: Dict[int, List[int]]) -> np.ndarray:
    """Link axis of body j in its frame: toward its child joint, else toward its COM."""
    kids = children.get(j, [])
    if len(kids) == 1:
        p = model.jointPlacements[kids[0]].translation
        if np.linalg.norm(p) > 1e-3:
            return p / np.linalg.norm(p)
    c = model.inertias[j].lever
    if np.linalg.norm(c) > 1e-3:
        return c / np.linalg.norm(c)
    return np.array([0.0, 0.0, 1.0 if model.parents[j] == 0 else -1.0])


def _common_axis(model: pin.Model, js: List[int], children: Dict[int, List[int]], name: str,
                 warnings: List[str]) -> np.ndarray:
    """One axis for mirrored links: theirs if they agree, else their mean (mirrored parts
    cancel), else the mean COM direction, else -z."""
    axes = np.array([_axis(model, j, children) for j in js])
    if max(np.linalg.norm(a - axes[0]) for a in axes) <= 0.2:
        return axes[0]
    for cand, what in ((axes.mean(axis=0), 'mean of the sides\' link axes'),
                       (np.mean([model.inertias[j].lever for j in js], axis=0),
                        'mean COM direction')):
        if np.linalg.norm(cand) > 0.3 * (1.0 if what.startswith('mean of') else 1e-2):
            warnings.append(f'group {name}: the sides\' link axes mirror each other; axis = '
                            f'{what}: check it')
            return cand / np.linalg.norm(cand)
    warnings.append(f'group {name}: no common link axis; axis = -z: check it')
    return np.array([0.0, 0.0, -1.0])


def _groups(model: pin.Model, warnings: List[str]) -> dict:
    from legid_ros.core.robot import body_names

    bodies = body_names(model)
    children: Dict[int, List[int]] = {}
    for j in range(1, model.njoints):
        children.setdefault(model.parents[j], []).append(j)
    index = {name: j + 1 for j, name in enumerate(bodies)}
    root = bodies[0] if model.names[1] == 'root_joint' else None
    moving = [b for b in bodies if b != root]
    groups, single = find_groups(moving)
    out = {}

    def entry(links, axis=None):
        js = [index[link] for link in links]
        axis = _axis(model, js[0], children) if axis is None else axis
        coms = [model.inertias[j].lever for j in js]
        return {'links': list(links), 'axis': _r(axis),
                'lc_cad_m': round(float(np.mean([c @ axis for c in coms])), 6),
                'mass_cad_kg': round(float(np.mean([model.inertias[j].mass for j in js])), 6),
                'com_cad_m': _r(coms[0])}

    if root is not None:
        out['trunk'] = entry([root])
    for name, sides in sorted(groups.items(), key=lambda kv: min(index[v] for v in
                                                                 kv[1].values())):
        links = [sides[s] for s in layout_of(list(sides))]
        out[name if name not in out else f'{name}_group'] = entry(
            links, _common_axis(model, [index[link] for link in links], children, name,
                                warnings))
    for link in single:
        warnings.append(f'link {link} has no mirrored partner: its own group (lock it with '
                        '--lock if it does not move)')
        out[link] = entry([link])
    return out


def _primitive_com_ok(model: pin.Model, body: str, shapes, warnings: List[str]) -> bool:
    """Whether homogeneous primitives keep the COM within 1 cm of the CAD COM (else warn)."""
    fr = model.frames[model.getFrameId(body)]
    vol = {'box': lambda s: np.prod(s), 'cylinder': lambda s: np.pi * s[0] ** 2 * s[1],
           'sphere': lambda s: 4 / 3 * np.pi * s[0] ** 3}
    w = np.array([vol[s.kind](s.size) for s in shapes])
    c = (w[:, None] * np.array([s.pose.translation for s in shapes])).sum(0) / w.sum()
    cad = fr.placement.actInv(model.inertias[fr.parentJoint].lever)
    gap = np.linalg.norm(c - cad)
    if gap > 0.01:
        warnings.append(f'collision shapes of {body} as homogeneous primitives put the COM '
                        f'{gap * 1000:.0f} mm from the CAD COM: not written (add primitives: '
                        'by hand if you want them)')
    return gap <= 0.01


def _primitives(model: pin.Model, links, warnings: List[str]) -> dict:
    """Primitive bodies of every moving body whose collision shapes are all primitives."""
    from legid_ros.core.robot import body_names

    out = {}
    for body in body_names(model):
        shapes = body_shapes(model, links, body)
        if not shapes or any(s.kind not in PRIMITIVE for s in shapes):
            continue
        items = []
        for s in shapes:
            item = {'type': PRIMITIVE[s.kind]}
            if s.kind == 'box':
                item['size'] = _r(s.size)
            elif s.kind == 'cylinder':
                item.update(radius=round(float(s.size[0]), 6), length=round(float(s.size[1]), 6))
            else:
                item['radius'] = round(float(s.size[0]), 6)
            item['xyz'] = _r(s.pose.translation)
            rpy = pin.rpy.matrixToRpy(s.pose.rotation)
            if np.linalg.norm(rpy) > 1e-9:
                item['rpy'] = _r(rpy)
            items.append(item)
        if _primitive_com_ok(model, body, shapes, warnings):
            out[body] = items
    return out


def _urdf_name(urdf: Path) -> str:
    text = str(urdf.resolve())
    marker = '/cmeel.prefix/share/'
    if marker in text:
        return 'package://' + text.split(marker, 1)[1]
    return text


def _foot_entry(foot: str, sole: Sole, model: pin.Model) -> dict:
    fid = model.getFrameId(foot)
    tokens = sorted((f.type != pin.FrameType.BODY, f.name, _frame_tokens(f.name))
                    for f in model.frames if f.parentJoint == model.frames[fid].parentJoint)
    ft = [n for _, n, t in tokens if {'ft', 'wrench', 'force', 'fts'} & set(t)]
    entry = {'link': foot, 'sole_frame': sole.frame, 'contact': sole.contact}
    if sole.contact == 'flat':
        entry['sole_size_m'] = _r(sole.size, 4)
    if ft:
        entry['ft_frame'] = ft[0]
    return entry


def describe_urdf(urdf: Path, feet: Sequence[str], lock: Optional[Dict[str, float]] = None,
                  name: Optional[str] = None, corner_sensors: bool = False,
                  fsr_topic: str = DEFAULT_FSR_TOPIC, sensor_xyz=None,
                  sensor_name: Optional[str] = None) -> Described:
    """Generate a starting description of a URDF or an MJCF (its ``urdf:`` key names it).

    Args:
        urdf: URDF or MJCF file (:func:`legid_ros.core.description.model_file.is_mjcf`).
        feet: Foot links (any link or frame of the model).
        lock: Joints to lock -> value [rad or m].
        name: Robot name (default: the URDF's robot name or file stem).
        corner_sensors: List four force sensors at each flat sole's corners (front-left,
            front-right, rear-left, rear-right).
        fsr_topic: Topic of corner sensor ``k`` of ``foot`` (``{foot}``, ``{k}`` filled).
        sensor_xyz: Positions of the sole sensors in each flat foot's sole frame, (k, 3) [m]
            (default: the sole rectangle's corners).
        sensor_name: Name (and frame name) of sensor ``k`` of ``foot`` (``{foot}``, ``{k}``;
            default ``<foot>_force_<k>``).

    Raises:
        RobotDescriptionError: Unreadable model file, unknown foot or joint.
    """
    urdf = Path(urdf)
    links = scan_model(urdf)
    warnings: List[str] = []
    lock = dict(lock or {})
    model, _ = build_model(urdf, True, {'locked_joints': lock}, [], None)
    data = model.createData()
    pin.framesForwardKinematics(model, data, pin.neutral(model))
    desc = {'robot': name or urdf.stem, 'urdf': _urdf_name(urdf),
            'base_link': root_link(links)}
    imu = sorted((f.type != pin.FrameType.BODY, f.name) for f in model.frames
                 if 'imu' in _frame_tokens(f.name))
    imu = [n for _, n in imu]
    desc['imu_frame'] = imu[0] if imu else desc['base_link']
    if not imu:
        warnings.append('no frame named *imu*: imu_frame set to the base link; define the IMU '
                        'frame under frames: if it is elsewhere')
    if lock:
        desc['locked_joints'] = {k: float(v) for k, v in lock.items()}
    frames, feet_out, legs = {}, {}, {}
    for foot, fname in zip(feet, _foot_names(feet)):
        if not model.existFrame(foot):
            raise RobotDescriptionError(f'--feet: {foot!r} is not a link or frame of the model')
        sole = find_sole(model, data, links, foot, fname, urdf.parent, warnings)
        if sole.frame_spec is not None:
            frames[sole.frame] = sole.frame_spec
        feet_out[fname] = _foot_entry(foot, sole, model)
        feet_out[fname]['wrench_topic'] = f'{fname}_foot/wrench'
        if corner_sensors and sole.contact == 'flat':
            half = np.asarray(sole.size) / 2
            xyz = sensor_xyz if sensor_xyz is not None else [
                [sx * half[0], sy * half[1], 0.0] for sx, sy in ((1, 1), (1, -1), (-1, 1),
                                                                  (-1, -1))]
            feet_out[fname]['force_sensors'] = [
                {'topic': fsr_topic.format(foot=fname, k=k), 'xyz': _r(p)}
                for k, p in enumerate(xyz)]
            if sensor_name:
                for k, sensor in enumerate(feet_out[fname]['force_sensors']):
                    sensor['name'] = sensor_name.format(foot=fname, k=k)
        legs[fname] = {'joints': _chain(model, model.frames[model.getFrameId(foot)].parentJoint),
                       'foot_frame': foot}
    if frames:
        desc['frames'] = frames
    desc['feet'] = feet_out
    desc['legs'] = legs
    desc['link_groups'] = _groups(model, warnings)
    prims = _primitives(model, links, warnings)
    if prims:
        desc['primitives'] = prims
    return Described(desc, warnings)
