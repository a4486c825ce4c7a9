"""Geometry the estimator node draws: support polygon, CoM, link COMs (pinocchio, no ROS).

Positions are in the estimator's support-sole frame (the support sole centre at the origin,
flat, as in :func:`legid_ros.core.identification.rows.regressors.support_base_state`); the
node shifts them by the support anchor to the buffer's world frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional

import numpy as np
import pinocchio as pin

from legid_ros.core.inertial import set_parameters
from legid_ros.core.robot import Robot


@dataclass
class Scene:
    """What to draw for one sample.

    Attributes:
        polygon: Support polygon corners, counter-clockwise, (k, 3) [m] (z = 0).
        com: Whole-body centre of mass (3,) [m].
        link_coms: Per moving body, its centre of mass (nb, 3) [m].
        link_masses: Per moving body, its mass (nb,) [kg].
        link_names: Body names.
        link_com_std: Per moving body, the standard deviation of its COM [m] (NaN where
            unknown), or None.
    """

    polygon: np.ndarray
    com: np.ndarray
    link_coms: np.ndarray
    link_masses: np.ndarray
    link_names: List[str]
    link_com_std: Optional[np.ndarray] = None


def scene_to_world(scene: Scene, anchor: np.ndarray, heading: float) -> Scene:
    """The scene moved from the support-sole frame to the buffer's world: ``anchor + Rz(heading)
    p`` for every point (``anchor`` (2,) [m], ``heading`` [rad]; heights unchanged)."""
    from dataclasses import replace

    from legid_ros.core.buffer.window import support_to_world

    def move(p):
        p = np.asarray(p, float)
        return support_to_world(p, anchor, heading).reshape(p.shape) if p.size else p
    return replace(scene, polygon=move(scene.polygon), com=move(scene.com),
                   link_coms=move(scene.link_coms))


def convex_hull_2d(points: np.ndarray) -> np.ndarray:
    """Counter-clockwise convex hull of 2-D points (monotone chain)."""
    pts = sorted(set(map(tuple, np.round(np.asarray(points, float)[:, :2], 12))))
    if len(pts) <= 2:
        return np.array(pts)

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    lower, upper = [], []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return np.array(lower[:-1] + upper[:-1])


class SceneBuilder:
    """Computes :class:`Scene` for a floating-base configuration and a parameter set.

    Args:
        robot: Floating-base robot (its own model is not modified).
    """

    def __init__(self, robot: Robot):
        self.robot = robot
        self.model = robot.model.copy()
        self.data = self.model.createData()
        self.names = robot.body_names
        self._corners = {}
        self.com_std: Optional[np.ndarray] = None
        for name, foot in robot.feet.items():
            if foot.sensor_frames:
                self._corners[name] = [(robot.frame_id(f), np.zeros(3))
                                       for f in foot.sensor_frames]
            elif foot.sole_size is not None:
                hx, hy = 0.5 * foot.sole_size
                fid = robot.frame_id(foot.sole_frame)
                self._corners[name] = [(fid, np.array([sx * hx, sy * hy, 0.0]))
                                       for sx, sy in ((1, 1), (1, -1), (-1, -1), (-1, 1))]
            else:
                self._corners[name] = [(robot.frame_id(foot.sole_frame), np.zeros(3))]

    def set_parameters(self, pi: np.ndarray) -> None:
        """Use the standard parameters ``pi`` for the COMs and masses."""
        set_parameters(self.model, pi)

    def set_uncertainty(self, std: Dict[str, float]) -> None:
        """COM standard deviations from a core uncertainty (``lc_<group>`` [m] -> every link of
        the group; links of no group stay unknown)."""
        out = np.full(len(self.names), np.nan)
        for name, grp in self.robot.link_groups.items():
            value = std.get(f'lc_{name}')
            if value is None or not np.isfinite(value):
                continue
            for link in grp.links:
                if link in self.names:
                    out[self.names.index(link)] = float(value)
        self.com_std = out

    def scene(self, q: np.ndarray, feet_in_contact: List[str]) -> Scene:
        """Scene at the full configuration ``q`` with the given feet on the ground."""
        model, data = self.model, self.data
        pin.forwardKinematics(model, data, q)
        pin.updateFramePlacements(model, data)
        com = pin.centerOfMass(model, data, q, False)
        coms = np.array([data.oMi[j].act(model.inertias[j].lever)
                         for j in range(1, model.njoints)])
        masses = np.array([model.inertias[j].mass for j in range(1, model.njoints)])
        pts = [data.oMf[fid].act(off) for foot in feet_in_contact
               for fid, off in self._corners.get(foot, [])]
        poly = convex_hull_2d(np.array(pts)) if pts else np.zeros((0, 2))
        poly3 = np.column_stack([poly, np.zeros(len(poly))]) if len(poly) else np.zeros((0, 3))
        return Scene(polygon=poly3, com=np.array(com), link_coms=coms, link_masses=masses,
                     link_names=list(self.names), link_com_std=self.com_std)
