"""Load a robot (URDF + description YAML) into pinocchio."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Union

import numpy as np
import pinocchio as pin
import yaml

from legid_ros.core import paths
from legid_ros.core.errors import RobotDescriptionError


@dataclass
class Foot:
    """One foot of a robot, as named in the description YAML.

    Attributes:
        name: Foot name ('left', 'right', 'lf', ...).
        link: URDF link of the foot.
        sole_frame: Frame at the sole centre, z up.
        ft_frame: Frame of the 6-axis force/torque sensor, if any.
        sole_size: Sole length (x) and width (y) [m], if the foot has a sole.
        sensor_frames: Frames of the sole pressure sensors (corners).
        wrench_topic: Topic of the foot's WrenchStamped: ground-on-foot wrench at ``ft_frame``.
        fsr_topic_prefix: Prefix of the per-sensor WrenchStamped topics.
        ankle_ft_topic: Topic of the raw ankle F/T reading (WrenchStamped at ``ft_frame``: the
            wrench the leg exerts on the foot [N, N.m], which in swing weighs the foot).
            Description key ``ankle_ft_topic``; default ``<wrench_topic>_raw``; None when the
            description sets it to null (no raw topic).
    """

    name: str
    link: str
    sole_frame: str
    ft_frame: Optional[str] = None
    sole_size: Optional[np.ndarray] = None  # [m]
    sensor_frames: List[str] = field(default_factory=list)
    wrench_topic: str = ''
    fsr_topic_prefix: str = ''
    ankle_ft_topic: Optional[str] = None


@dataclass
class LinkGroup:
    """Links sharing one entry of the ZMP reduced set (Wu & Gao 2021): axial COM and mass.

    Attributes:
        name: Group name ('trunk', 'thigh', ...).
        links: URDF links in the group.
        axis: Unit vector of the link axis in the link frame.
        lc_cad: CAD COM offset along the axis [m].
        mass_cad: CAD mass of one link [kg].
    """

    name: str
    links: List[str]
    axis: np.ndarray
    lc_cad: float  # [m]
    mass_cad: float  # [kg]


@dataclass
class Robot:
    """A robot model and its description.

    Attributes:
        name: Robot name.
        model: pinocchio model (free-flyer root if ``floating``).
        urdf_path: URDF the model was built from.
        description: Raw description YAML.
        floating: Whether the root joint is a free flyer.
        feet: Feet by name.
        link_groups: Link groups of the ZMP reduced set (may be empty).
        imu_frame: Frame of the IMU.
        base_link: Root link of the URDF.
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

    def new_data(self) -> pin.Data:
        """A fresh pinocchio Data for the model."""
        return self.model.createData()

    @property
    def actuated_joint_names(self) -> List[str]:
        """Names of the non-root joints, in pinocchio order (one DOF each)."""
        start = 2 if self.floating else 1
        return list(self.model.names[start:])

    @property
    def body_names(self) -> List[str]:
        """Link carrying the inertia of each moving joint, in pinocchio order."""
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


def body_names(model: pin.Model) -> List[str]:
    """Name of the link whose inertia each joint (1..njoints-1) carries."""
    names = []
    for j in range(1, model.njoints):
        link = None
        for f in model.frames:
            if f.parentJoint == j and f.type == pin.FrameType.BODY:
                link = f.name
                break
        names.append(link or model.names[j])
    return names


def _resolve(robot: Union[str, Path]):
    """Return (description path, description dict) for a robot name or YAML path."""
    p = Path(robot)
    if p.suffix in ('.yaml', '.yml'):
        ypath = p
    else:
        ypath = paths.config_path(f'{robot}.yaml')
        if not ypath.is_file():
            known = ', '.join(paths.available_robots())
            raise RobotDescriptionError(f'unknown robot {str(robot)!r}; built-in robots: {known}')
    if not ypath.is_file():
        raise RobotDescriptionError('robot description not found', str(ypath))
    try:
        desc = yaml.safe_load(ypath.read_text())
    except yaml.YAMLError as exc:
        raise RobotDescriptionError(f'cannot parse description YAML: {exc}', str(ypath)) from exc
    if not isinstance(desc, dict) or 'urdf' not in desc:
        raise RobotDescriptionError('description YAML has no "urdf" key', str(ypath))
    return ypath, desc


def load_robot(robot: Union[str, Path] = 'biped', floating_base: bool = True,
               urdf: Optional[Union[str, Path]] = None) -> Robot:
    """Load a robot into pinocchio.

    Args:
        robot: Built-in robot name ('biped', 'quadruped', ...) or path of a description YAML.
        floating_base: Add a free-flyer root joint.
        urdf: Override the URDF named in the description (e.g. an identified one).

    Returns:
        The loaded :class:`Robot`.

    Raises:
        RobotDescriptionError: Unknown robot, missing or unparsable file, bad frame names.
    """
    ypath, desc = _resolve(robot)
    if urdf is None:
        upath = Path(desc['urdf'])
        if not upath.is_absolute():
            local = ypath.parent / upath
            upath = local if local.is_file() else paths.urdf_path(str(upath))
    else:
        upath = Path(urdf)
    if not upath.is_file():
        raise RobotDescriptionError('URDF not found', str(upath))
    try:
        if floating_base:
            model = pin.buildModelFromUrdf(str(upath), pin.JointModelFreeFlyer())
        else:
            model = pin.buildModelFromUrdf(str(upath))
    except (RuntimeError, ValueError) as exc:
        raise RobotDescriptionError(f'pinocchio cannot load the URDF: {exc}', str(upath)) from exc
    feet = {}
    for name, f in (desc.get('feet') or {}).items():
        size = f.get('sole_size_m')
        wrench_topic = f.get('wrench_topic', f'{name}_foot/wrench')
        raw_topic = f.get('ankle_ft_topic', f'{wrench_topic}_raw')
        feet[name] = Foot(name=name, link=f['link'], sole_frame=f.get('sole_frame', f['link']),
                          ft_frame=f.get('ft_frame'),
                          sole_size=None if size is None else np.asarray(size, float),
                          sensor_frames=list(f.get('sensor_frames', [])),
                          wrench_topic=wrench_topic,
                          fsr_topic_prefix=f.get('fsr_topic_prefix', f'{name}_foot/fsr'),
                          ankle_ft_topic=None if raw_topic is None else str(raw_topic))
    groups = {}
    for name, g in (desc.get('link_groups') or {}).items():
        axis = np.asarray(g['axis'], float)
        groups[name] = LinkGroup(name=name, links=list(g['links']),
                                 axis=axis / np.linalg.norm(axis),
                                 lc_cad=float(g['lc_cad_m']), mass_cad=float(g['mass_cad_kg']))
    out = Robot(name=str(desc.get('robot', ypath.stem)), model=model, urdf_path=upath,
                description=desc, floating=floating_base, feet=feet, link_groups=groups,
                imu_frame=desc.get('imu_frame', desc.get('base_link', 'trunk')),
                base_link=desc.get('base_link', 'trunk'))
    for foot in feet.values():
        for frame in [foot.link, foot.sole_frame] + foot.sensor_frames:
            out.frame_id(frame)
    for g in groups.values():
        for link in g.links:
            out.frame_id(link)
    return out
