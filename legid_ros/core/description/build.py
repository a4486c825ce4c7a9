"""The pinocchio model a description asks for: URDF or MJCF, joint-name map, locked joints,
frames.

Keys read here::

    joint_name_map: {robot_joint: urdf_joint}   # names on /joint_states -> URDF names
    locked_joints: {joint: value}               # [rad] or [m]; a list for a multi-DOF joint
    frames: {...}                               # see legid_ros.core.description.spec

Locked joints go through pinocchio's ``buildReducedModel``: each locked joint becomes fixed
at its value and the bodies past it fold into their parent body (mass, COM and inertia
added). Joint values of any joint kind are velocity-space coordinates (one per DOF, so a
continuous joint is its angle and a spherical joint a rotation vector) mapped to the model
configuration by ``pin.integrate`` from the neutral configuration, so nq != nv is handled.
Joints take their robot names (the keys of ``joint_name_map``) in the model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy as np
import pinocchio as pin

from legid_ros.core.description.errors import DescriptionKeyError, suggest
from legid_ros.core.description.model_file import load_model
from legid_ros.core.description.spec import FrameSpec, finite_vector


def first_joint(model: pin.Model) -> int:
    """Index of the first non-root joint (2 with a free flyer, else 1)."""
    return 2 if model.njoints > 1 and model.names[1] == 'root_joint' else 1


def joint_values_to_q(model: pin.Model, values: Dict[int, Sequence[float]],
                      q0: Optional[np.ndarray] = None) -> np.ndarray:
    """Configuration with joints at the given values (velocity-space coordinates per DOF).

    Args:
        model: pinocchio model.
        values: Joint index -> its ``nv`` values ([rad] or [m]; a continuous joint's angle,
            a spherical joint's rotation vector).
        q0: Configuration of the other joints (default neutral).
    """
    q = pin.neutral(model) if q0 is None else np.array(q0, float)
    dv = np.zeros(model.nv)
    for j, val in values.items():
        jm = model.joints[j]
        q[jm.idx_q:jm.idx_q + jm.nq] = pin.neutral(model)[jm.idx_q:jm.idx_q + jm.nq]
        dv[jm.idx_v:jm.idx_v + jm.nv] = np.asarray(val, float).reshape(-1)
    return pin.integrate(model, q, dv)


def _joint_map(model: pin.Model, desc: dict, path: Optional[str]) -> Dict[str, str]:
    """robot joint name -> URDF joint name (checked)."""
    raw = desc.get('joint_name_map') or {}
    if not isinstance(raw, dict):
        raise DescriptionKeyError('joint_name_map', 'is not a mapping',
                                  'write "joint_name_map: {robot_joint: urdf_joint}"', path)
    names = list(model.names)[first_joint(model):]
    out = {}
    for robot_name, urdf_name in raw.items():
        if str(urdf_name) not in names:
            raise DescriptionKeyError(f'joint_name_map.{robot_name}',
                                      f'URDF joint {urdf_name!r} is not a moving joint of the '
                                      'URDF', suggest(urdf_name, names, 'URDF joints'), path)
        out[str(robot_name)] = str(urdf_name)
    if len(set(out.values())) != len(out):
        raise DescriptionKeyError('joint_name_map', 'maps two robot names to one URDF joint',
                                  'give each URDF joint one robot name', path)
    return out


def _lock(model: pin.Model, desc: dict, to_urdf: Dict[str, str],
          path: Optional[str]) -> pin.Model:
    raw = desc.get('locked_joints') or {}
    if not isinstance(raw, dict):
        raise DescriptionKeyError('locked_joints', 'is not a mapping',
                                  'write "locked_joints: {joint: value}" [rad or m]', path)
    if not raw:
        return model
    names = list(model.names)[first_joint(model):]
    values = {}
    for name, value in raw.items():
        key = f'locked_joints.{name}'
        urdf_name = to_urdf.get(str(name), str(name))
        if urdf_name not in names:
            raise DescriptionKeyError(key, 'is not a moving joint of the URDF',
                                      suggest(name, names, 'URDF joints'), path)
        j = model.getJointId(urdf_name)
        val = np.asarray(finite_vector(value, key, model.joints[j].nv, path), float)
        jm = model.joints[j]
        if jm.nq == 1:
            lo, hi = model.lowerPositionLimit[jm.idx_q], model.upperPositionLimit[jm.idx_q]
            if not lo - 1e-9 <= val[0] <= hi + 1e-9:
                raise DescriptionKeyError(key, f'{val[0]} is outside the URDF limits '
                                          f'[{lo:.4g}, {hi:.4g}]', 'give a value within them',
                                          path)
        values[j] = val
    q_ref = joint_values_to_q(model, values)
    return pin.buildReducedModel(model, sorted(values), q_ref)


def _rename(model: pin.Model, to_urdf: Dict[str, str]) -> None:
    """Give the mapped joints (and their joint frames) their robot names."""
    for robot_name, urdf_name in to_urdf.items():
        if not model.existJointName(urdf_name):
            continue  # locked
        j = model.getJointId(urdf_name)
        model.names[j] = robot_name
        for i, frame in enumerate(model.frames):
            if frame.type == pin.FrameType.JOINT and frame.name == urdf_name:
                frame.name = robot_name
                model.frames[i] = frame


def add_frames(model: pin.Model, frames: List[FrameSpec], path: Optional[str]) -> None:
    """Add the description's frames (in order: a frame may sit on an earlier one)."""
    for spec in frames:
        if model.existFrame(spec.name):
            raise DescriptionKeyError(spec.key, f'frame {spec.name!r} is already in the model',
                                      'remove this entry (the URDF has it) or rename it', path)
        if not model.existFrame(spec.parent):
            raise DescriptionKeyError(f'{spec.key}.parent' if spec.key.startswith('frames')
                                      else spec.key, f'parent frame {spec.parent!r} is unknown',
                                      suggest(spec.parent, [f.name for f in model.frames],
                                              'frames'), path)
        pid = model.getFrameId(spec.parent)
        parent = model.frames[pid]
        local = pin.SE3(pin.rpy.rpyToMatrix(*spec.rpy), np.asarray(spec.xyz, float))
        model.addFrame(pin.Frame(spec.name, parent.parentJoint, pid, parent.placement * local,
                                 pin.FrameType.OP_FRAME), False)


def build_model(urdf_path: Path, floating: bool, desc: dict, frames: List[FrameSpec],
                path: Optional[str] = None):
    """(model, robot -> URDF joint-name map) of a description (``urdf_path``: a URDF or MJCF
    file, :func:`legid_ros.core.description.model_file.load_model`).

    Raises:
        DescriptionKeyError: A bad ``joint_name_map``, ``locked_joints`` or frame entry.
        RobotDescriptionError: The URDF (or MJCF) does not load.
    """
    model = load_model(urdf_path, floating)
    to_urdf = _joint_map(model, desc, path)
    model = _lock(model, desc, to_urdf, path)
    _rename(model, to_urdf)
    add_frames(model, frames, path)
    return model, to_urdf
