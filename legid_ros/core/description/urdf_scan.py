"""What a URDF's XML says beyond pinocchio's model: collision and visual shapes, link tree.

Used by ``legid describe`` to find soles and primitive bodies. Poses are
``pin.SE3`` of the shape in its link frame; sizes [m]. :func:`scan_model` reads an MJCF too
(:mod:`legid_ros.core.description.mjcf_scan`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Optional, Union

import numpy as np
import pinocchio as pin

from legid_ros.core.description.resources import resolve_uri, stl_vertices
from legid_ros.core.errors import RobotDescriptionError

SHAPES = ('box', 'cylinder', 'sphere', 'mesh')


@dataclass
class Shape:
    """One collision shape.

    Attributes:
        kind: 'box', 'cylinder', 'sphere', 'mesh' (URDF and MJCF), 'capsule' or 'ellipsoid'
            (MJCF).
        pose: Pose of the shape in its link frame.
        size: Box sides (3,), cylinder or capsule (radius, length of the cylinder part),
            sphere (radius,), ellipsoid semi-axes (3,), mesh scale (3,).
        mesh: Mesh file name as written in the model file (mesh only).
        vertices: A mesh's vertices in the shape frame (n, 3) [m] when known (an MJCF's,
            compiled by MuJoCo); else read from ``mesh``.
    """

    kind: str
    pose: pin.SE3
    size: np.ndarray
    mesh: str = ''
    vertices: Optional[np.ndarray] = None

    def placed(self, pose: pin.SE3) -> 'Shape':
        """The same shape at another pose."""
        return replace(self, pose=pose)

    def corners(self, base_dir: Optional[Path] = None) -> np.ndarray:
        """Points bounding the shape in its link frame [m]: the 8 corners of its box (of the
        mesh's bounding box), or a sphere's 6 extreme points.

        Raises:
            RobotDescriptionError: A mesh file that cannot be found or read.
        """
        if self.kind == 'sphere':  # its extreme points: the lowest is where it touches
            ext = np.vstack([np.eye(3), -np.eye(3)]) * self.size[0]
            return ext @ self.pose.rotation.T + self.pose.translation
        if self.kind == 'mesh':
            local = (self.vertices if self.vertices is not None
                     else stl_vertices(resolve_uri(self.mesh, base_dir)) * self.size)
            lo, hi = local.min(axis=0), local.max(axis=0)
        else:
            half = {'box': lambda s: s / 2, 'ellipsoid': lambda s: s,
                    'cylinder': lambda s: np.array([s[0], s[0], s[1] / 2]),
                    'capsule': lambda s: np.array([s[0], s[0], s[1] / 2 + s[0]])
                    }[self.kind](self.size)
            lo, hi = -half, half
        box = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                        for z in (lo[2], hi[2])])
        return box @ self.pose.rotation.T + self.pose.translation


@dataclass
class UrdfLink:
    """A URDF link: its collision and visual shapes and the joint that carries it.

    Attributes:
        name: Link name.
        collisions: Collision shapes.
        visuals: Visual shapes.
        parent_joint: Name of the joint whose child it is ('' for the root).
        parent_link: Parent link ('' for the root).
        joint_type: Type of that joint ('fixed', 'revolute', ...).
        origin: Pose of the link frame in the parent link frame.
    """

    name: str
    collisions: List[Shape] = field(default_factory=list)
    visuals: List[Shape] = field(default_factory=list)
    parent_joint: str = ''
    parent_link: str = ''
    joint_type: str = ''
    origin: pin.SE3 = field(default_factory=pin.SE3.Identity)


def urdf_origin(el) -> pin.SE3:
    """Pose of an element's ``<origin>`` (identity when it has none)."""
    o = el.find('origin') if el is not None else None
    if o is None:
        return pin.SE3.Identity()
    xyz = np.array([float(x) for x in o.get('xyz', '0 0 0').split()])
    rpy = np.array([float(x) for x in o.get('rpy', '0 0 0').split()])
    return pin.SE3(pin.rpy.rpyToMatrix(*rpy), xyz)


def _shape(col) -> Optional[Shape]:
    geo = col.find('geometry')
    if geo is None:
        return None
    for kind in SHAPES:
        el = geo.find(kind)
        if el is None:
            continue
        if kind == 'box':
            size = [float(x) for x in el.get('size', '0 0 0').split()]
        elif kind == 'cylinder':
            size = [float(el.get('radius', 0)), float(el.get('length', 0))]
        elif kind == 'sphere':
            size = [float(el.get('radius', 0))]
        else:
            size = [float(x) for x in el.get('scale', '1 1 1').split()]
            return Shape('mesh', urdf_origin(col), np.asarray(size, float), el.get('filename', ''))
        return Shape(kind, urdf_origin(col), np.asarray(size, float))
    return None


def scan_urdf(path: Union[str, Path]) -> Dict[str, UrdfLink]:
    """Links of a URDF by name, with their collision shapes and parent joints.

    Raises:
        RobotDescriptionError: Unreadable XML.
    """
    try:
        root = ET.parse(str(path)).getroot()
    except (ET.ParseError, OSError) as exc:
        raise RobotDescriptionError(f'cannot read URDF: {exc}', str(path)) from exc
    links = {}
    for el in root.findall('link'):
        shapes = [_shape(c) for c in el.findall('collision')]
        visuals = [_shape(c) for c in el.findall('visual')]
        links[el.get('name')] = UrdfLink(el.get('name'), [s for s in shapes if s is not None],
                                         [s for s in visuals if s is not None])
    for el in root.findall('joint'):
        child = el.find('child').get('link')
        if child in links:
            link = links[child]
            link.parent_joint = el.get('name')
            link.parent_link = el.find('parent').get('link')
            link.joint_type = el.get('type', '')
            link.origin = urdf_origin(el)
    return links


def scan_model(path: Union[str, Path]) -> Dict[str, UrdfLink]:
    """Links of a URDF or MJCF file (:func:`scan_urdf`,
    :func:`legid_ros.core.description.mjcf_scan.scan_mjcf`).

    Raises:
        RobotDescriptionError: Unreadable file.
    """
    from legid_ros.core.description.model_file import is_mjcf

    if is_mjcf(path):
        from legid_ros.core.description.mjcf_scan import scan_mjcf
        return scan_mjcf(path)
    return scan_urdf(path)


def root_link(links: Dict[str, UrdfLink]) -> str:
    """The link no joint has as child."""
    roots = [name for name, link in links.items() if not link.parent_joint]
    if len(roots) != 1:
        raise RobotDescriptionError(f'URDF has {len(roots)} root links: {roots}')
    return roots[0]
