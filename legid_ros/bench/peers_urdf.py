"""A URDF re-rooted at another link, for tools that only take a fixed-base model.

FIGAROH's identification workflow takes joint torques of a fixed-base URDF. The biped standing
on its right foot is such a robot only when the tree is rooted at that foot: this module
rewrites the URDF so that ``new_root`` is the root link, joint values and torques unchanged.

For the chain ``L0 (old root) -J1- L1 ... -Jk- Lk (new root)``, with ``Ji`` of origin ``Oi`` and
axis ``ai``, link ``Li`` (i < k) gets the frame of its old joint ``J(i+1)`` (everything it holds
is moved by ``O(i+1)^-1``); the reversed joint ``Ji'`` has parent ``Li``, child ``L(i-1)``,
origin ``O(i+1)^-1`` (identity for ``i = k``) and axis ``-ai``: then
``frame(L(i-1)) = frame(Li) R(ai, -q)`` as before, so ``q`` and the joint torque keep their
values and signs.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import List

import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError


def _origin_se3(elem) -> pin.SE3:
    org = elem.find('origin') if elem is not None else None
    if org is None:
        return pin.SE3.Identity()
    xyz = np.array([float(x) for x in org.get('xyz', '0 0 0').split()])
    rpy = np.array([float(x) for x in org.get('rpy', '0 0 0').split()])
    return pin.SE3(pin.rpy.rpyToMatrix(*rpy), xyz)


def _set_origin(elem, m: pin.SE3) -> None:
    org = elem.find('origin')
    if org is None:
        org = ET.SubElement(elem, 'origin')
    org.set('xyz', ' '.join(f'{x:.12g}' for x in m.translation))
    org.set('rpy', ' '.join(f'{x:.12g}' for x in pin.rpy.matrixToRpy(m.rotation)))


def _move_link(link, m: pin.SE3) -> None:
    """Pre-multiply every origin inside ``link`` (inertial, visuals, collisions) by ``m``."""
    for tag in ('inertial', 'visual', 'collision'):
        for elem in link.findall(tag):
            _set_origin(elem, m * _origin_se3(elem))


def _path_to_root(joints: list, new_root: str) -> List:
    """Joints from the old root down to ``new_root`` (``J1 .. Jk``)."""
    parent_joint = {j.find('child').get('link'): j for j in joints}
    path, link = [], new_root
    while link in parent_joint:
        j = parent_joint[link]
        path.append(j)
        link = j.find('parent').get('link')
    return path[::-1]


def reroot_urdf(text: str, new_root: str) -> str:
    """The URDF ``text`` re-rooted at link ``new_root`` (joint names and values unchanged).

    Raises:
        BadInputError: ``new_root`` is not a link of the URDF.
    """
    robot = ET.fromstring(text)
    links = {ln.get('name'): ln for ln in robot.findall('link')}
    if new_root not in links:
        raise BadInputError(f'URDF has no link {new_root!r}')
    joints = robot.findall('joint')
    path = _path_to_root(joints, new_root)
    origins = [_origin_se3(j) for j in path]
    k = len(path)
    # new frame of L_i (i < k) = old frame of L_i * O_(i+1)
    moves = {path[i].find('parent').get('link'): origins[i].inverse() for i in range(k)}
    on_path = set(id(j) for j in path)
    for j in joints:  # other joints hanging off a moved link
        if id(j) not in on_path:
            m = moves.get(j.find('parent').get('link'))
            if m is not None:
                _set_origin(j, m * _origin_se3(j))
    for name, m in moves.items():
        _move_link(links[name], m)
    for i, j in enumerate(path):
        par, chi = j.find('parent'), j.find('child')
        p_name, c_name = par.get('link'), chi.get('link')
        par.set('link', c_name)
        chi.set('link', p_name)
        _set_origin(j, origins[i + 1].inverse() if i + 1 < k else pin.SE3.Identity())
        axis = j.find('axis')
        if axis is not None:
            a = -np.array([float(x) for x in axis.get('xyz').split()])
            axis.set('xyz', ' '.join(f'{x:.12g}' for x in a + 0.0))
    # pinocchio takes the first link without a parent as the root: put the new root first
    robot.remove(links[new_root])
    robot.insert(0, links[new_root])
    return ET.tostring(robot, encoding='unicode')
