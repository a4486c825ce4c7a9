"""Load a robot (URDF + description YAML) into pinocchio.

The description's keys are read by :mod:`legid_ros.core.description` (feet, force sensors,
link groups and frames in ``spec``; joint-name map, locked joints and frames in ``build``).
``docs/robots.md`` tells how to describe a robot of your own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Union

import numpy as np
import pinocchio as pin
import yaml

from legid_ros.core import paths
from legid_ros.core.conventions.spec import ImuSpec, parse_imu
from legid_ros.core.description.build import build_model, first_joint, joint_values_to_q
from legid_ros.core.description.errors import DescriptionKeyError, suggest
from legid_ros.core.description.resources import resolve_uri
from legid_ros.core.description.spec import (ForceSensor, Foot, LinkGroup, parse_feet,
                                             parse_frames, parse_link_groups)
from legid_ros.core.errors import RobotDescriptionError

__all__ = ['ForceSensor', 'Foot', 'LinkGroup', 'Robot', 'body_names', 'load_robot']


@dataclass
class Robot:
    """A robot model and its description.

    Attributes:
        name: Robot name.
        model: pinocchio model (free-flyer root if ``floating``; locked joints removed, their
            bodies folded into their parents; joints under their robot names).
        urdf_path: URDF the model was built from.
        description: Raw description YAML.
        floating: Whether the root joint is a free flyer.
        feet: Feet by name.
        link_groups: Link groups of the ZMP reduced set (may be empty).
        imu_frame: Frame of the IMU.
        base_link: Root link of the URDF.
        joint_name_map: Robot joint name -> URDF joint name (only the renamed joints).
        locked_joints: Locked joint -> its value(s) [rad or m].
        imu: The IMU stream (topic, frame id, mounting, heading; description key ``imu``).
    """

    name: str
    model: pin.Model
    urdf_path: Path
    description: dict
    floating: bool
    feet: Dict[str, Foot]
    link_groups: Dict[str, LinkGroup]
    imu_frame: str
    base_link: str
    joint_name_map: Dict[str, str] = field(default_factory=dict)
    locked_joints: Dict[str, np.ndarray] = field(default_factory=dict)
    imu: ImuSpec = field(default_factory=ImuSpec)

    def new_data(self) -> pin.Data:
        """A fresh pinocchio Data for the model."""
        return self.model.createData()

    @property
    def actuated_joint_names(self) -> List[str]:
        """Names of the non-root joints, in pinocchio order (robot names, one per joint).

        A joint may have several DOF (``nv > 1``) or more configuration than velocity
        coordinates (a continuous joint: ``nq = 2``, ``nv = 1``): see :meth:`dof_names` and
        :meth:`configuration`.
        """
        return list(self.model.names[first_joint(self.model):])

    @property
    def dof_names(self) -> List[str]:
        """One name per joint velocity coordinate (``<joint>`` or ``<joint>/<k>``)."""
        out = []
        for j in range(first_joint(self.model), self.model.njoints):
            name, nv = self.model.names[j], self.model.joints[j].nv
            out += [name] if nv == 1 else [f'{name}/{k}' for k in range(nv)]
        return out

    @property
    def has_only_scalar_joints(self) -> bool:
        """Whether every non-root joint has nq == nv == 1 (joint columns = q = v slots)."""
        return all(self.model.joints[j].nq == 1 and self.model.joints[j].nv == 1
                   for j in range(first_joint(self.model), self.model.njoints))

    def configuration(self, joint_values: np.ndarray,
                      base: Optional[np.ndarray] = None) -> np.ndarray:
        """Model configuration (nq,) from one value per joint DOF (``dof_names`` order).

        Args:
            joint_values: Joint values, velocity-space coordinates (nv_joints,) [rad, m]: a
                continuous joint's angle, a spherical joint's rotation vector.
            base: Free-flyer pose (x, y, z, qx, qy, qz, qw) [m, -]; identity if None.
        """
        model = self.model
        j0 = first_joint(model)
        vals = np.asarray(joint_values, float).reshape(-1)
        idx_v = model.joints[j0].idx_v if j0 < model.njoints else model.nv
        if vals.size != model.nv - idx_v:
            raise DescriptionKeyError('joint values', f'{vals.size} values for '
                                      f'{model.nv - idx_v} joint DOF',
                                      'give one value per entry of dof_names')
        q = joint_values_to_q(model, {j: vals[model.joints[j].idx_v - idx_v:
                                             model.joints[j].idx_v - idx_v + model.joints[j].nv]
                                      for j in range(j0, model.njoints)})
        if self.floating and base is not None:
            q[:7] = base
        return q

    def joint_values(self, q: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`configuration`: one value per joint DOF [rad, m]."""
        dv = pin.difference(self.model, pin.neutral(self.model), np.asarray(q, float))
        return dv[6:] if self.floating else dv

    @property
    def body_names(self) -> List[str]:
        """Link carrying the inertia of each moving joint, in pinocchio order.

        """
        return body_names(self.model)

    @property
    def total_mass(self) -> float:
        """Total mass of the model [kg]."""
        return float(sum(self.model.inertias[j].mass for j in range(self.model.njoints)))

    def frame_id(self, frame: str) -> int:
        """pinocchio index of a frame; raises RobotDescriptionError if unknown."""
        if not self.model.existFrame(frame):
            raise RobotDescriptionError(f'frame {frame!r} is not in robot {self.name!r}')
        return self.model.getFrameId(frame)

    def neutral(self) -> np.ndarray:
        """Neutral configuration (identity base, zero joints)."""
        return pin.neutral(self.model)

    def force_sensor_positions(self, foot: str) -> np.ndarray:
        """Positions of a foot's force sensors in its sole frame, (n, 3) [m]."""
        f = self.feet[foot]
        data = self.new_data()
        pin.framesForwardKinematics(self.model, data, self.neutral())
        sole = data.oMf[self.frame_id(f.sole_frame)]
        return np.array([sole.actInv(data.oMf[self.frame_id(s.frame)]).translation
                         for s in f.force_sensors]).reshape(-1, 3)

    def force_sensor_topics(self) -> Dict[str, List[str]]:
        """Per foot: the topic of each of its force sensors (description order)."""
        return {name: foot.fsr_topics for name, foot in self.feet.items()}


_BODY_NAMES: Dict[tuple, List[str]] = {}


def body_names(model: pin.Model) -> List[str]:
    """Name of the link whose inertia each joint (1..njoints-1) carries.

    Computed once per model structure (it walks every frame, and hot paths ask often).
    """
    key = (id(model), tuple(model.names), len(model.frames))
    names = _BODY_NAMES.get(key)
    if names is None:
        names = []
        for j in range(1, model.njoints):
            link = None
            for f in model.frames:
                if f.parentJoint == j and f.type == pin.FrameType.BODY:
                    link = f.name
                    break
            names.append(link or model.names[j])
        if len(_BODY_NAMES) > 64:
            _BODY_NAMES.clear()
        _BODY_NAMES[key] = names
    return list(names)


def _resolve(robot: Union[str, Path]):
    """Return (description path, description dict) for a robot name or YAML path."""
    p = Path(robot)
    if p.suffix in ('.yaml', '.yml'):
        ypath = p
    else:
        ypath = paths.config_path(f'{robot}.yaml')
        shipped = paths.config_path(f'robots/{robot}.yaml')  # described robots (docs/robots.md)
        if not ypath.is_file() and shipped.is_file():
            ypath = shipped
        if not ypath.is_file():
            known = ', '.join(paths.available_robots())
            extra = sorted(q.stem for q in paths.config_path('robots').glob('*.yaml'))
            raise RobotDescriptionError(f'unknown robot {str(robot)!r}; built-in robots: {known}'
                                        + (f'; described robots: {", ".join(extra)}'
                                           if extra else ''))
    if not ypath.is_file():
        raise RobotDescriptionError('robot description not found', str(ypath))
    try:
        desc = yaml.safe_load(ypath.read_text())
    except yaml.YAMLError as exc:
        raise RobotDescriptionError(f'cannot parse description YAML: {exc}', str(ypath)) from exc
    if not isinstance(desc, dict) or 'urdf' not in desc:
        raise RobotDescriptionError('description YAML has no "urdf" key', str(ypath))
    return ypath, desc


def _urdf_path(desc: dict, ypath: Path, urdf) -> Path:
    if urdf is not None:
        upath = Path(urdf)
    else:
        name = str(desc['urdf'])
        upath = resolve_uri(name, ypath.parent)
        if not upath.is_file() and not Path(name).is_absolute() and '://' not in name:
            upath = paths.urdf_path(name)
    if not upath.is_file():
        raise RobotDescriptionError('URDF not found', str(upath))
    return upath


def _check_frames(out: Robot, path: str) -> None:
    """Every frame the description names exists (error names the key and the fix)."""
    known = [f.name for f in out.model.frames]

    def need(frame, key, fix_extra=''):
        if frame is not None and not out.model.existFrame(str(frame)):
            raise DescriptionKeyError(key, f'frame {frame!r} is not in the model',
                                      suggest(frame, known, 'frames') + '; or define it under '
                                      'frames: {NAME: {parent: LINK, xyz: [..], rpy: [..]}}'
                                      + fix_extra, path)

    for name, foot in out.feet.items():
        need(foot.link, f'feet.{name}.link')
        need(foot.sole_frame, f'feet.{name}.sole_frame')
        need(foot.ft_frame, f'feet.{name}.ft_frame')
        if foot.ft_frame is not None and \
                out.model.frames[out.model.getFrameId(foot.ft_frame)].parentJoint == 0:
            raise DescriptionKeyError(f'feet.{name}.ft_frame', f'frame {foot.ft_frame!r} is '
                                      'fixed to the world, not to the foot (its Jacobian is '
                                      'zero)', 'name the sensor frame on the foot (or drop '
                                      'ft_frame) and write expressed_in: world for forces in '
                                      'world axes', path)
        for k, sensor in enumerate(foot.force_sensors):
            key = (f'feet.{name}.force_sensors[{k}].frame' if 'force_sensors' in
                   (out.description['feet'][name] or {}) else f'feet.{name}.sensor_frames[{k}]')
            need(sensor.frame, key)
    for gname, g in out.link_groups.items():
        for k, link in enumerate(g.links):
            need(link, f'link_groups.{gname}.links[{k}]',
                 ' (a locked link folds into its parent: name the parent)')
    if 'imu_frame' in out.description:
        need(out.imu_frame, 'imu_frame')
    if 'frame' in (out.description.get('imu') or {}):
        need(out.imu_frame, 'imu.frame')


def load_robot(robot: Union[str, Path] = 'biped', floating_base: bool = True,
               urdf: Optional[Union[str, Path]] = None) -> Robot:
    """Load a robot into pinocchio.

    Args:
        robot: Built-in robot name ('biped', 'quadruped', ...; also the described robots of
            ``config/robots/``: 'talos', 'solo12') or path of a description YAML
            (its ``urdf`` may be relative to the YAML, a built-in URDF name, or a
            ``package://`` URI, see :mod:`legid_ros.core.description.resources`).
        floating_base: Add a free-flyer root joint.
        urdf: Override the URDF named in the description (e.g. an identified one).

    Returns:
        The loaded :class:`Robot`.

    Raises:
        RobotDescriptionError: Unknown robot, missing or unparsable file, bad frame names;
            a bad key raises its subclass
            :class:`legid_ros.core.description.errors.DescriptionKeyError`, which names the
            key and the fix.
    """
    ypath, desc = _resolve(robot)
    where = str(ypath)
    upath = _urdf_path(desc, ypath, urdf)
    feet, sensor_frames = parse_feet(desc, where)
    groups = parse_link_groups(desc, where)
    model, to_urdf = build_model(upath, floating_base, desc,
                                 parse_frames(desc, where) + sensor_frames, where)
    imu = parse_imu(desc, where)
    locked = {str(k): np.asarray(v, float).reshape(-1)
              for k, v in (desc.get('locked_joints') or {}).items()}
    out = Robot(name=str(desc.get('robot', ypath.stem)), model=model, urdf_path=upath,
                description=desc, floating=floating_base, feet=feet, link_groups=groups,
                imu_frame=imu.frame, base_link=desc.get('base_link', 'trunk'),
                joint_name_map=to_urdf, locked_joints=locked, imu=imu)
    _check_frames(out, where)
    return out
