"""Self-collision of a robot from its URDF's collision meshes (pinocchio + coal).

Pairs checked: geometries on different joints that are not parent and child, and that do not
already touch in a motion the robot is known to make (``q_known``: the standing excitation's
knots; e.g. Talos's locked forearms touch its thigh meshes whenever a hip moves): those pairs are
listed in ``excluded``, not checked.
A URDF without collision geometry gets one capsule per moving link, from its joint to its child
joint (radius ``CAPSULE_RADIUS`` of that length), so a swinging leg is still checked against the
other legs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Tuple

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import RobotDescriptionError
from legid_ros.core.robot import Robot

CAPSULE_RADIUS = 0.18  # [-] of the link's length


def _package_dirs(urdf: Path) -> List[str]:
    parts = [str(p) for p in urdf.parents]
    share = str(urdf).split('example-robot-data')[0] if 'example-robot-data' in str(urdf) else None
    return ([share] if share else []) + parts[:4]


def _capsules(robot: Robot) -> pin.GeometryModel:
    import coal
    model = robot.model
    data = model.createData()
    pin.forwardKinematics(model, data, pin.neutral(model))
    geom = pin.GeometryModel()
    for j in range(2, model.njoints):
        kids = [c for c in range(j + 1, model.njoints) if model.parents[c] == j]
        for c in kids:
            off = model.jointPlacements[c].translation
            length = float(np.linalg.norm(off))
            if length < 1e-3:
                continue
            z = off / length
            x = np.cross(z, [1.0, 0.0, 0.0])
            if np.linalg.norm(x) < 1e-6:
                x = np.cross(z, [0.0, 1.0, 0.0])
            x /= np.linalg.norm(x)
            rot = np.column_stack([x, np.cross(z, x), z])
            # the capsule's ends 10 % inside each joint (neighbours meet at the joints)
            shape = coal.Capsule(CAPSULE_RADIUS * length, 0.8 * length)
            geom.addGeometryObject(pin.GeometryObject(
                f'capsule_{model.names[j]}_{c}', j, pin.SE3(rot, 0.5 * off), shape))
    return geom


@dataclass
class SelfCollision:
    """A robot's collision model and the pairs that matter."""

    robot: Robot
    geom: pin.GeometryModel
    pairs: List[Tuple[int, int]]
    source: str
    excluded: List[str] = field(default_factory=list)
    near: List[str] = field(default_factory=list)

    @classmethod
    def build(cls, robot: Robot, q_known: np.ndarray, margin_m: float = 0.0
              ) -> 'SelfCollision':
        """Collision model from the URDF or MJCF (capsules if it has none); pairs as the
        docstring.

        ``q_known``: (K, nq) configurations of a known motion (or one (nq,) rest posture).
        ``margin_m``: pairs closer than this count as colliding (the design keeps a distance
        for the tracking error of the real motion) [m]; a pair already that close in the known
        motion without touching (Talos's forearms and thighs) keeps half the margin, or none
        when it is within that too."""
        from legid_ros.core.description.model_file import is_mjcf

        source = 'urdf'
        try:
            if is_mjcf(robot.urdf_path):
                source = 'mjcf'
                geom = pin.buildGeomFromMJCF(robot.model, str(robot.urdf_path),
                                             pin.GeometryType.COLLISION)
            else:
                geom = pin.buildGeomFromUrdf(robot.model, str(robot.urdf_path),
                                             pin.GeometryType.COLLISION,
                                             package_dirs=_package_dirs(Path(robot.urdf_path)))
        except (ValueError, RuntimeError, RobotDescriptionError):
            geom = pin.GeometryModel()
        if geom.ngeoms == 0:
            geom, source = _capsules(robot), 'capsules'
        model = robot.model
        pairs = []
        for i in range(geom.ngeoms):
            for k in range(i + 1, geom.ngeoms):
                a = geom.geometryObjects[i].parentJoint
                b = geom.geometryObjects[k].parentJoint
                if a == b or model.parents[a] == b or model.parents[b] == a:
                    continue
                pairs.append((i, k))
        out = cls(robot, geom, pairs, source)
        known = np.atleast_2d(q_known)
        out._set_pairs(pairs, {})
        touching = set()
        for q in known:
            touching.update(out.colliding(q))
        out.excluded = sorted(out.names(p) for p in touching)
        rest = [p for p in pairs if p not in touching]
        near = set()
        if margin_m > 0:
            out._set_pairs(rest, {p: margin_m for p in rest})
            for q in known:
                near.update(out.colliding(q))
        closer = set()  # within half the margin too: contact only
        if near:
            half = sorted(near)
            out._set_pairs(half, {p: 0.5 * margin_m for p in half})
            for q in known:
                closer.update(out.colliding(q))
        out.near = sorted(out.names(p) for p in near)
        out._set_pairs(rest, {p: (0.0 if p in closer else 0.5 * margin_m if p in near
                                  else float(margin_m)) for p in rest})
        return out

    def _set_pairs(self, pairs: List[Tuple[int, int]], margins: dict) -> None:
        self.geom.removeAllCollisionPairs()
        for i, k in pairs:
            self.geom.addCollisionPair(pin.CollisionPair(i, k))
        self.pairs = list(pairs)
        self._data = self.robot.model.createData()
        self._gdata = pin.GeometryData(self.geom)
        for pair, req in zip(self.pairs, self._gdata.collisionRequests):
            req.security_margin = margins.get(pair, 0.0)

    def colliding(self, q: np.ndarray) -> List[Tuple[int, int]]:
        """Pairs in collision at ``q``."""
        if not pin.computeCollisions(self.robot.model, self._data, self.geom, self._gdata, q,
                                     False):
            return []
        return [self.pairs[p] for p in range(len(self.pairs))
                if self._gdata.collisionResults[p].isCollision()]

    def names(self, pair: Tuple[int, int]) -> str:
        """Readable pair."""
        return ' / '.join(self.geom.geometryObjects[i].name for i in pair)
