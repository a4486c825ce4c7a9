"""What an MJCF says beyond pinocchio's model: its bodies' geoms as collision and visual shapes.

The MJCF is compiled by MuJoCo (defaults, classes, ``fromto``, mesh files resolved as MuJoCo
does), so a geom's pose and size are the simulator's. A geom that collides with nothing
(``contype`` and ``conaffinity`` 0, MuJoCo's visual-only geoms) is a visual shape, any other a
collision shape. Sizes are converted to the URDF conventions of
:class:`~legid_ros.core.description.urdf_scan.Shape` (MuJoCo gives half sizes); a mesh keeps
its compiled vertices, in the body frame. Each named body is a link; its first joint is the
link's parent joint (a body without one is fixed to its parent, a body on the world is a
root).
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Union

import numpy as np
import pinocchio as pin

from legid_ros.core.description.urdf_scan import Shape, UrdfLink
from legid_ros.core.errors import RobotDescriptionError

JOINT_TYPES = {0: 'floating', 1: 'ball', 2: 'prismatic', 3: 'revolute'}


def _pose(pos, quat) -> pin.SE3:
    """SE3 of a MuJoCo position and quaternion (w, x, y, z)."""
    w, x, y, z = (float(v) for v in quat)
    return pin.SE3(pin.Quaternion(w, x, y, z).normalized().toRotationMatrix(),
                   np.array(pos, float))


def _shape(m, g: int):
    """Shape of geom ``g`` of the compiled model ``m`` (None for a plane, height field, ...)."""
    import mujoco

    kind = mujoco.mjtGeom(int(m.geom_type[g]))
    size = np.array(m.geom_size[g], float)
    pose = _pose(m.geom_pos[g], m.geom_quat[g])
    if kind == mujoco.mjtGeom.mjGEOM_BOX:
        return Shape('box', pose, 2 * size)
    if kind == mujoco.mjtGeom.mjGEOM_SPHERE:
        return Shape('sphere', pose, size[:1])
    if kind in (mujoco.mjtGeom.mjGEOM_CYLINDER, mujoco.mjtGeom.mjGEOM_CAPSULE):
        name = 'cylinder' if kind == mujoco.mjtGeom.mjGEOM_CYLINDER else 'capsule'
        return Shape(name, pose, np.array([size[0], 2 * size[1]]))
    if kind == mujoco.mjtGeom.mjGEOM_ELLIPSOID:
        return Shape('ellipsoid', pose, size)
    if kind == mujoco.mjtGeom.mjGEOM_MESH and m.geom_dataid[g] >= 0:
        k = int(m.geom_dataid[g])
        start, n = int(m.mesh_vertadr[k]), int(m.mesh_vertnum[k])
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_MESH, k) or f'mesh_{k}'
        local = np.array(m.mesh_vert[start:start + n], float)
        # MuJoCo moves a mesh to its principal axes: the vertices go back to the body frame,
        # where the mesh was drawn (its bounding box there is the URDF mesh's)
        return Shape('mesh', pin.SE3.Identity(), np.ones(3), name,
                     local @ pose.rotation.T + pose.translation)
    return None


def scan_mjcf(path: Union[str, Path]) -> Dict[str, UrdfLink]:
    """Links (named bodies) of an MJCF by name, with their shapes and parent joints.

    Raises:
        RobotDescriptionError: MuJoCo cannot compile the file (XML error, a missing mesh).
    """
    import mujoco

    try:
        m = mujoco.MjModel.from_xml_path(str(path))
    except (ValueError, OSError) as exc:
        raise RobotDescriptionError(f'MuJoCo cannot read the MJCF: {exc}', str(path)) from exc
    name = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) or '' for b in range(m.nbody)]
    links: Dict[str, UrdfLink] = {}
    for b in range(1, m.nbody):
        if not name[b]:
            continue
        link = UrdfLink(name[b])
        parent = int(m.body_parentid[b])
        if parent != 0:
            link.parent_link = name[parent]
            link.origin = _pose(m.body_pos[b], m.body_quat[b])
            if m.body_jntnum[b] > 0:
                j = int(m.body_jntadr[b])
                link.parent_joint = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) or ''
                link.joint_type = JOINT_TYPES.get(int(m.jnt_type[j]), '')
            else:
                link.parent_joint, link.joint_type = f'{name[b]}_fixed', 'fixed'
        links[name[b]] = link
    for g in range(m.ngeom):
        body = name[int(m.geom_bodyid[g])]
        shape = _shape(m, g)
        if body not in links or shape is None:
            continue
        visual = m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 0
        (links[body].visuals if visual else links[body].collisions).append(shape)
    return links
