"""The robot's model file: a URDF or an MJCF (MuJoCo's XML), told apart by its root element.

Everything that reads the model file of a description (its ``urdf:`` key, which may name
either) goes through here: :func:`load_model` builds the pinocchio model,
:func:`legid_ros.core.description.urdf_scan.scan_model` reads the shapes. pinocchio reads both
formats; an MJCF body is a link, its first joint the link's parent joint, a body without a
joint a link fixed to its parent (pinocchio makes it a frame, as a URDF fixed joint).

A free joint on the MJCF root body (``<freejoint/>``, what MuJoCo models of walking robots
carry) becomes the floating base ``root_joint``; a fixed-base model of such a file is built
from a copy without it.
"""

from __future__ import annotations

import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Union

import pinocchio as pin

from legid_ros.core.errors import RobotDescriptionError

ROOT_JOINT = 'root_joint'


def is_mjcf(path: Union[str, Path]) -> bool:
    """Whether ``path`` is an MJCF file (root element ``<mujoco>``); a URDF's is ``<robot>``.

    Raises:
        RobotDescriptionError: The file is not readable XML.
    """
    try:
        for _, el in ET.iterparse(str(path), events=('start',)):
            return el.tag == 'mujoco'
    except (ET.ParseError, OSError) as exc:
        raise RobotDescriptionError(f'cannot read the model file: {exc}', str(path)) from exc
    return False


def _free_root(model: pin.Model) -> bool:
    return model.njoints > 1 and model.parents[1] == 0 and \
        model.joints[1].shortname() == 'JointModelFreeFlyer'


def _without_free_joints(path: Path) -> pin.Model:
    """Fixed-base model of an MJCF whose root body has a free joint (built from a copy)."""
    tree = ET.parse(str(path))
    world = tree.getroot().find('worldbody')
    for body in (world.findall('body') if world is not None else []):
        for el in list(body):
            if el.tag == 'freejoint' or (el.tag == 'joint' and el.get('type') == 'free'):
                body.remove(el)
    compiler = tree.getroot().find('compiler')
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / path.name
        if compiler is not None:  # asset directories stay those of the original
            for key in ('meshdir', 'texturedir', 'assetdir'):
                if compiler.get(key) and not Path(compiler.get(key)).is_absolute():
                    compiler.set(key, str(path.parent / compiler.get(key)))
        tree.write(str(copy))
        return pin.buildModelFromMJCF(str(copy))


def _load_mjcf(path: Path, floating: bool) -> pin.Model:
    model = pin.buildModelFromMJCF(str(path))
    if _free_root(model):
        if floating:
            model.names[1] = ROOT_JOINT
            return model
        return _without_free_joints(path)
    if not floating:
        return model
    return pin.buildModelFromMJCFAndRootJoint(str(path), pin.JointModelFreeFlyer(), ROOT_JOINT)


def load_model(path: Union[str, Path], floating: bool) -> pin.Model:
    """pinocchio model of a URDF or MJCF file, with a free-flyer root if ``floating``.

    Args:
        path: URDF or MJCF file (:func:`is_mjcf`).
        floating: Free-flyer root joint named ``root_joint`` (an MJCF root body's free
            joint is it); False: fixed base (an MJCF free joint is dropped).

    Raises:
        RobotDescriptionError: pinocchio cannot load the file.
    """
    path = Path(path)
    mjcf = is_mjcf(path)
    try:
        if mjcf:
            return _load_mjcf(path, floating)
        if floating:
            return pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
        return pin.buildModelFromUrdf(str(path))
    except (RuntimeError, ValueError, ET.ParseError) as exc:
        raise RobotDescriptionError(f'pinocchio cannot load the {"MJCF" if mjcf else "URDF"}: '
                                    f'{exc}', str(path)) from exc
