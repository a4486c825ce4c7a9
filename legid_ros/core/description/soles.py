"""Soles and contact points of feet from collision shapes (``legid describe``).

All links pinocchio attaches to a foot's body (the foot link, links fixed to it, locked
links) count. In the neutral configuration, the shapes' bounding points lowest in the world
(within :data:`FOOTPRINT_TOL_M` of the lowest) make the footprint: a flat sole when it is
wider than :data:`POINT_FOOT_M` in both directions, else a point foot at its centre.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np
import pinocchio as pin

from legid_ros.core.description.urdf_scan import Shape, UrdfLink
from legid_ros.core.errors import RobotDescriptionError

FOOTPRINT_TOL_M = 0.005  # [m] points this close to the lowest one touch the ground
POINT_FOOT_M = 0.04  # [m] footprints smaller than this in x or y are point feet


@dataclass
class Sole:
    """Where a foot touches the ground.

    Attributes:
        frame: Sole frame name (at the footprint centre, z up).
        frame_spec: Its ``frames:`` entry when the description must define it, else None.
        contact: 'flat' or 'point'.
        size: Footprint length (x) and width (y) [m].
    """

    frame: str
    frame_spec: Optional[dict]
    contact: str
    size: np.ndarray


def body_shapes(model: pin.Model, links: Dict[str, UrdfLink], frame: str,
                kind: str = 'collisions') -> List[Shape]:
    """Collision (or ``kind='visuals'``) shapes of every link on ``frame``'s body, posed in
    ``frame``."""
    fid = model.getFrameId(frame)
    ref = model.frames[fid]
    out = []
    for f in model.frames:
        if f.type != pin.FrameType.BODY or f.parentJoint != ref.parentJoint:
            continue
        for s in getattr(links.get(f.name, UrdfLink(f.name)), kind):
            pose = ref.placement.actInv(f.placement * s.pose)
            out.append(s.placed(pose))
    return out


def _frame_name(model: pin.Model, wanted: str) -> str:
    name = wanted
    while model.existFrame(name):
        name += '_frame'
    return name


def _points(model, links, foot, base_dir, kind, warnings) -> List[np.ndarray]:
    points = []
    for s in body_shapes(model, links, foot, kind):
        try:
            points.append(s.corners(base_dir))
        except RobotDescriptionError as exc:
            warnings.append(f'foot {foot}: mesh {s.mesh} not read ({exc})')
    return points


def _existing(model: pin.Model, data: pin.Data, foot: str, place: pin.SE3) -> Optional[str]:
    """A frame on the foot's body named *sole* at ``place`` (within 2 mm, same axes)."""
    joint = model.frames[model.getFrameId(foot)].parentJoint
    order = sorted(range(len(model.frames)),
                   key=lambda i: (model.frames[i].type != pin.FrameType.BODY, i))
    for i in order:
        f = model.frames[i]
        if (f.parentJoint == joint and 'sole' in f.name.lower().split('_')
                and np.linalg.norm(data.oMf[i].translation - place.translation) < 2e-3
                and np.allclose(data.oMf[i].rotation, place.rotation, atol=1e-6)):
            return f.name
    return None


def find_sole(model: pin.Model, data: pin.Data, links: Dict[str, UrdfLink], foot: str,
              foot_name: str, base_dir: Path, warnings: List[str]) -> Sole:
    """The sole of one foot (``data`` holds the neutral frame placements): from collision
    shapes, else visual shapes (warned), else the link origin as a point foot (warned)."""
    fid = model.getFrameId(foot)
    rot = data.oMf[fid].rotation  # foot axes in the world
    points = _points(model, links, foot, base_dir, 'collisions', warnings)
    if not points:
        points = _points(model, links, foot, base_dir, 'visuals', warnings)
        if points:
            warnings.append(f'foot {foot}: no collision geometry; sole from its visual '
                            'geometry: check sole_frame and sole_size_m')
    if not points:
        warnings.append(f'foot {foot}: no geometry; sole frame at the link origin, point '
                        'contact: measure the sole and edit sole_frame/sole_size_m')
        return Sole(foot, None, 'point', np.zeros(2))
    world = np.vstack(points) @ rot.T  # world-aligned, origin at the foot frame
    low = world[world[:, 2] < world[:, 2].min() + FOOTPRINT_TOL_M]
    lo, hi = low[:, :2].min(axis=0), low[:, :2].max(axis=0)
    size = hi - lo
    centre = np.array([*(lo + hi) / 2, world[:, 2].min()])
    contact = 'flat' if np.all(size >= POINT_FOOT_M) else 'point'
    if contact == 'point':
        size = np.zeros(2)
    xyz = rot.T @ centre
    found = _existing(model, data, foot, pin.SE3(np.eye(3), data.oMf[fid].translation + centre))
    if found is not None:
        return Sole(found, None, contact, size)
    rpy = pin.rpy.matrixToRpy(rot.T)
    name = _frame_name(model, f'{foot_name}_sole')
    spec = {'parent': foot, 'xyz': [round(float(v), 6) + 0.0 for v in xyz]}  # no -0.0
    if np.linalg.norm(rpy) > 1e-9:
        spec['rpy'] = [round(float(v), 6) for v in rpy]
    return Sole(name, spec, contact, size)


CONTACT_TOL_M = 0.003  # [m] a point foot's contact point this far from the shapes' lowest point


def contact_point_problems(robot) -> List[str]:
    """Point feet whose contact point (``sole_frame``) is not the lowest point of the foot's
    collision shapes at the reference (neutral) posture, e.g. a sphere's centre instead of
    its bottom; one line each with the key and the fix."""
    from legid_ros.core.description.urdf_scan import scan_model

    feet = [f for f in robot.feet.values() if f.contact == 'point']
    if not feet:
        return []
    try:
        links = scan_model(robot.urdf_path)
    except (RobotDescriptionError, OSError, ValueError):
        return []
    model, data = robot.model, robot.new_data()
    pin.framesForwardKinematics(model, data, robot.neutral())
    out = []
    for foot in feet:
        points = _points(model, links, foot.link, robot.urdf_path.parent, 'collisions', [])
        if not points:
            continue
        rot = data.oMf[model.getFrameId(foot.link)].rotation
        world = np.vstack(points) @ rot.T  # world axes, origin at the foot link
        low = world[world[:, 2] < world[:, 2].min() + FOOTPRINT_TOL_M]
        lowest = np.array([*low[:, :2].mean(axis=0), world[:, 2].min()])
        sole = data.oMf[robot.frame_id(foot.sole_frame)].translation \
            - data.oMf[model.getFrameId(foot.link)].translation
        gap = float(np.linalg.norm(sole - lowest))
        if gap > CONTACT_TOL_M:
            xyz = [round(float(v), 6) for v in rot.T @ lowest]
            out.append(f'feet.{foot.name}.sole_frame: the contact point {foot.sole_frame!r} is '
                       f'{gap * 1e3:.0f} mm from the lowest point of {foot.link}\'s collision '
                       f'shapes (the ground contact); fix: a sole frame at xyz {xyz} in '
                       f'{foot.link}')
    return out
