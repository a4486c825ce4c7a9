"""Build a MuJoCo model (``mujoco.MjSpec``) from a robot's URDF and description YAML.

The kinematic tree is taken from the pinocchio model that :func:`legid_ros.core.robot.load_robot`
builds from the URDF, so MuJoCo bodies are pinocchio joints (fixed links merged into their
parent, exactly as in pinocchio) and every URDF link that pinocchio merged becomes a site with
the link's name. Inertials come from a standard parameter vector (pinocchio order, see
:mod:`legid_ros.core.inertial`), so the physics can run with *true* inertials that differ from
the CAD URDF the identification sees.

What the builder adds:

- simple visual geoms (capsules between joints, a plate at each sole), never colliding;
- a ground plane (``floor``) when the robot has a floating base;
- at each sole sensor frame a small contact sphere ``<sensor frame>_contact`` whose bottom lies
  in the sole plane, with a ``touch`` sensor ``<sensor frame>_touch`` (its normal force [N]);
- at each foot's F/T frame a ``force`` and a ``torque`` sensor ``<ft frame>_force|_torque``;
- at the IMU frame ``imu_quat`` (framequat), ``imu_gyro`` and ``imu_acc`` sensors;
- one position servo per actuated joint (``<joint>_servo``), with joint friction, damping and
  armature from :class:`SimOptions`.

No ROS here (core).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Union

import mujoco
import numpy as np
import pinocchio as pin

from legid_ros.core.errors import BadInputError, RobotDescriptionError
from legid_ros.core.inertial import get_parameters, set_parameters
from legid_ros.core.robot import Robot, body_names

PerJoint = Union[float, Dict[str, float]]


@dataclass
class SimOptions:
    """Physics settings of the MuJoCo model.

    Attributes:
        timestep_s: Integration step [s] (the servo rate is 1 / timestep).
        kp: Servo stiffness [N.m/rad] (per joint name or one value).
        kv: Servo damping [N.m.s/rad] (per joint name or one value).
        friction: Coulomb joint friction (MuJoCo frictionloss) [N.m].
        damping: Viscous joint damping [N.m.s/rad].
        armature: Reflected rotor inertia [kg.m^2].
        contact_radius_m: Radius of the sole-corner contact spheres [m].
        point_radius_m: Radius of a point foot's contact sphere [m] when its description
            gives none (``radius_m``): small, because the sphere rolls with the leg and its
            contact point moves ``radius * sin(tilt)`` from the foot frame, where the
            identification puts the force of a foot without a radius.
        mu: Sliding friction coefficient foot/ground.
        solref: MuJoCo contact solref (time constant [s], damping ratio).
        solimp: MuJoCo contact solimp.
        impratio: Frictional-to-normal impedance ratio (higher: less slip).
        effort_limit: Servo force limit when the URDF gives none [N.m].
        floor: Add a ground plane (default: when the base is floating).
    """

    timestep_s: float = 1e-3
    kp: PerJoint = 3000.0
    kv: PerJoint = 40.0
    friction: PerJoint = 0.3
    damping: PerJoint = 0.5
    armature: PerJoint = 0.02
    contact_radius_m: float = 0.004
    point_radius_m: float = 0.0002
    mu: float = 1.0
    solref: tuple = (0.004, 1.0)
    solimp: tuple = (0.95, 0.99, 0.001, 0.5, 2.0)
    impratio: float = 10.0
    effort_limit: float = 300.0
    floor: Optional[bool] = None


@dataclass
class SpecInfo:
    """Names of what :func:`build_spec` created, to read the sensors back.

    Attributes:
        joint_names: Actuated joints, pinocchio order (= actuator order).
        base_body: Body of the root link.
        floating: Whether the root is a free joint.
        contact_geoms: Per foot, contact sphere names in the description's sensor order.
        touch_sensors: Per foot, touch sensor names in the same order.
        ft_sensors: Per foot, (force sensor, torque sensor) names.
        imu_sensors: (framequat, gyro, accelerometer) names.
        sites: Names of the frame sites (URDF links merged by pinocchio).
    """

    joint_names: List[str]
    base_body: str
    floating: bool
    contact_geoms: Dict[str, List[str]] = field(default_factory=dict)
    touch_sensors: Dict[str, List[str]] = field(default_factory=dict)
    ft_sensors: Dict[str, tuple] = field(default_factory=dict)
    imu_sensors: tuple = ()
    sites: List[str] = field(default_factory=list)


def _value(v: PerJoint, joint: str, default: float = 0.0) -> float:
    """A per-joint setting: the dict entry for ``joint`` or the scalar."""
    if isinstance(v, dict):
        return float(v.get(joint, v.get('default', default)))
    return float(v)


def _quat(rot: np.ndarray) -> np.ndarray:
    """MuJoCo quaternion [w, x, y, z] of a rotation matrix."""
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(rot, float).ravel())
    return q


def _joint_axis(jmodel) -> tuple:
    """(MuJoCo joint type, axis) of a 1-DOF pinocchio joint model."""
    name = jmodel.shortname()
    revolute = 'Revolute' in name or name.startswith('JointModelR')
    prismatic = 'Prismatic' in name or name.startswith('JointModelP')
    if name[-1] in 'XYZ' and (name.startswith('JointModelR') or name.startswith('JointModelP')):
        axis = np.eye(3)['XYZ'.index(name[-1])]
    elif hasattr(jmodel, 'axis'):
        axis = np.asarray(jmodel.axis, float)
    else:
        raise RobotDescriptionError(f'joint type {name} is not supported by the MuJoCo builder')
    if revolute and not prismatic:
        return mujoco.mjtJoint.mjJNT_HINGE, axis
    if prismatic:
        return mujoco.mjtJoint.mjJNT_SLIDE, axis
    raise RobotDescriptionError(f'joint type {name} is not supported by the MuJoCo builder')


def _set_inertial(body, inertia: pin.Inertia) -> None:
    """Explicit inertial of a MuJoCo body from a pinocchio Inertia (joint frame)."""
    mass = max(float(inertia.mass), 1e-6)
    i_c = np.array(inertia.inertia)
    body.explicitinertial = True
    body.mass = mass
    body.ipos = np.array(inertia.lever)
    body.iquat = [1.0, 0.0, 0.0, 0.0]
    body.fullinertia = [i_c[0, 0], i_c[1, 1], i_c[2, 2], i_c[0, 1], i_c[0, 2], i_c[1, 2]]


def build_spec(robot: Robot, pi: Optional[np.ndarray] = None,
               options: Optional[SimOptions] = None) -> tuple:
    """Build the MuJoCo spec of a robot.

    Args:
        robot: Loaded robot (floating or fixed base).
        pi: Standard inertial parameters to simulate with (default: the URDF/CAD values).
        options: Physics settings.

    Returns:
        ``(spec, info)``: the ``mujoco.MjSpec`` (call ``spec.compile()``) and a
        :class:`SpecInfo` naming the created elements.

    Raises:
        BadInputError: ``pi`` has the wrong size or is not finite.
        RobotDescriptionError: unsupported joint type.
    """
    opt = options or SimOptions()
    model = robot.model.copy()
    if pi is not None:
        set_parameters(model, pi)
    floating = robot.floating
    spec = mujoco.MjSpec()
    spec.modelname = robot.name
    spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    spec.compiler.autolimits = True
    spec.compiler.degree = False
    spec.option.timestep = opt.timestep_s
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    spec.option.impratio = opt.impratio
    spec.option.iterations = 50
    if opt.floor if opt.floor is not None else floating:
        floor = spec.worldbody.add_geom()
        floor.name = 'floor'
        floor.type = mujoco.mjtGeom.mjGEOM_PLANE
        floor.size = [5.0, 5.0, 0.1]
        floor.friction = [opt.mu, 0.005, 0.0001]
        floor.rgba = [0.8, 0.8, 0.8, 1.0]

    names = body_names(model)
    bodies = {0: spec.worldbody}
    joint_names = []
    for j in range(1, model.njoints):
        parent = bodies[model.parents[j]]
        body = parent.add_body()
        body.name = names[j - 1]
        placement = model.jointPlacements[j]
        body.pos = np.array(placement.translation)
        body.quat = _quat(placement.rotation)
        _set_inertial(body, model.inertias[j])
        bodies[j] = body
        jname = model.names[j]
        if model.nqs[j] == 7 and model.nvs[j] == 6:
            fj = body.add_freejoint()
            fj.name = jname
            continue
        if model.nvs[j] != 1:
            raise RobotDescriptionError(f'joint {jname} has {model.nvs[j]} DOF; only 1 supported')
        jtype, axis = _joint_axis(model.joints[j])
        joint = body.add_joint()
        joint.name = jname
        joint.type = jtype
        joint.axis = axis
        iq, iv = model.idx_qs[j], model.idx_vs[j]
        lo, hi = model.lowerPositionLimit[iq], model.upperPositionLimit[iq]
        if np.isfinite(lo) and np.isfinite(hi) and hi > lo and abs(hi) < 1e6:
            joint.range = [lo, hi]
            joint.limited = mujoco.mjtLimited.mjLIMITED_TRUE
        joint.frictionloss = _value(opt.friction, jname)
        joint.damping = [_value(opt.damping, jname), 0.0, 0.0]
        joint.armature = _value(opt.armature, jname)
        joint_names.append(jname)
        effort = float(model.effortLimit[iv])
        if not np.isfinite(effort) or effort <= 0 or effort > 1e6:
            effort = opt.effort_limit
        act = spec.add_actuator()
        act.name = f'{jname}_servo'
        act.target = jname
        act.trntype = mujoco.mjtTrn.mjTRN_JOINT
        act.set_to_position(kp=_value(opt.kp, jname), kv=_value(opt.kv, jname))
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = [-effort, effort]

    info = SpecInfo(joint_names=joint_names, base_body=names[0], floating=floating)
    _add_visuals(model, bodies)
    main_bodies = set(names)
    for f in model.frames:
        if f.type != pin.FrameType.BODY or f.name in main_bodies or f.parentJoint == 0:
            continue
        site = bodies[f.parentJoint].add_site()
        site.name = f.name
        site.pos = np.array(f.placement.translation)
        site.quat = _quat(f.placement.rotation)
        site.size = [0.005, 0.005, 0.005]
        site.group = 3
        info.sites.append(f.name)
    _add_feet(robot, model, bodies, spec, opt, info)
    _add_imu(robot, model, bodies, spec, info)
    return spec, info


def _add_visuals(model: pin.Model, bodies: dict) -> None:
    """Capsules from each joint to its children's joints (visual only, no contact)."""
    for j in range(1, model.njoints):
        for c in range(j + 1, model.njoints):
            if model.parents[c] != j:
                continue
            p = np.array(model.jointPlacements[c].translation)
            if np.linalg.norm(p) < 1e-3:
                continue
            g = bodies[j].add_geom()
            g.type = mujoco.mjtGeom.mjGEOM_CAPSULE
            g.fromto = [0.0, 0.0, 0.0, *p]
            g.size = [0.02, 0.0, 0.0]
            g.contype = 0
            g.conaffinity = 0
            g.group = 1
            g.rgba = [0.4, 0.5, 0.7, 1.0]


def _frame(model: pin.Model, name: str) -> pin.Frame:
    if not model.existFrame(name):
        raise RobotDescriptionError(f'frame {name!r} not in the model')
    return model.frames[model.getFrameId(name)]


def _add_feet(robot: Robot, model: pin.Model, bodies: dict, spec, opt: SimOptions,
              info: SpecInfo) -> None:
    """Sole plates, corner contact spheres with touch sensors, ankle F/T sensors."""
    r = opt.contact_radius_m
    for foot in robot.feet.values():
        sole = _frame(model, foot.sole_frame)
        body = bodies[sole.parentJoint]
        if foot.sole_size is not None:
            plate = body.add_geom()
            plate.type = mujoco.mjtGeom.mjGEOM_BOX
            plate.size = [foot.sole_size[0] / 2, foot.sole_size[1] / 2, 0.004]
            plate.pos = np.array(sole.placement.act(np.array([0.0, 0.0, 0.006])))
            plate.quat = _quat(sole.placement.rotation)
            plate.contype = 0
            plate.conaffinity = 0
            plate.group = 1
            plate.rgba = [0.3, 0.3, 0.3, 1.0]
        geoms, touches = [], []
        # contacts at the sole sensors; a foot without any: one sphere at its sole frame (a
        # point foot's contact point), or at the four corners of its sole
        points = [(s, _frame(model, s)) for s in foot.sensor_frames]
        if not points and foot.sole_size is None:
            points = [(foot.sole_frame, sole)]
        elif not points:
            half = np.asarray(foot.sole_size, float) / 2
            points = [(f'{foot.sole_frame}_corner_{k}',
                       pin.Frame(f'{foot.sole_frame}_corner_{k}', sole.parentJoint,
                                 sole.parentFrame, sole.placement * pin.SE3(
                                     np.eye(3), np.array([sx * half[0], sy * half[1], 0.0])),
                                 pin.FrameType.OP_FRAME))
                      for k, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1)))]
        point = not foot.sensor_frames and foot.sole_size is None
        radius = (foot.radius or opt.point_radius_m) if point else r  # the described sphere
        for sname, fr in points:
            if fr.parentJoint != sole.parentJoint:
                raise RobotDescriptionError(f'sensor frame {sname} is not on the foot body')
            centre = fr.placement.act(np.array([0.0, 0.0, radius]))
            g = body.add_geom()
            g.name = f'{sname}_contact'
            g.type = mujoco.mjtGeom.mjGEOM_SPHERE
            g.size = [radius, 0.0, 0.0]
            g.pos = np.array(centre)
            g.friction = [opt.mu, 0.005, 0.0001]
            g.solref = list(opt.solref)
            g.solimp = list(opt.solimp)
            g.condim = 3
            g.rgba = [0.9, 0.2, 0.2, 1.0]
            site = body.add_site()
            site.name = f'{sname}_touch_site'
            site.pos = np.array(centre)
            site.size = [2.0 * radius, 0.0, 0.0]
            site.group = 4
            t = spec.add_sensor()
            t.name = f'{sname}_touch'
            t.type = mujoco.mjtSensor.mjSENS_TOUCH
            t.objtype = mujoco.mjtObj.mjOBJ_SITE
            t.objname = site.name
            geoms.append(g.name)
            touches.append(t.name)
        info.contact_geoms[foot.name] = geoms
        info.touch_sensors[foot.name] = touches
        if foot.ft_frame:
            fr = _frame(model, foot.ft_frame)
            if foot.ft_frame not in info.sites:  # a description frame: a site of its own
                site = bodies[fr.parentJoint].add_site()
                site.name = foot.ft_frame
                site.pos = np.array(fr.placement.translation)
                site.quat = _quat(fr.placement.rotation)
                site.group = 3
                info.sites.append(foot.ft_frame)
            pair = []
            for kind, stype in (('force', mujoco.mjtSensor.mjSENS_FORCE),
                                ('torque', mujoco.mjtSensor.mjSENS_TORQUE)):
                s = spec.add_sensor()
                s.name = f'{foot.ft_frame}_{kind}'
                s.type = stype
                s.objtype = mujoco.mjtObj.mjOBJ_SITE
                s.objname = foot.ft_frame
                pair.append(s.name)
            info.ft_sensors[foot.name] = tuple(pair)


def _add_imu(robot: Robot, model: pin.Model, bodies: dict, spec, info: SpecInfo) -> None:
    """Orientation, gyro and accelerometer at the IMU frame (a site, or the base body)."""
    frame = robot.imu_frame
    if frame not in info.sites:
        fr = _frame(model, frame)
        site = bodies[fr.parentJoint].add_site()
        site.name = f'{frame}_imu_site'
        site.pos = np.array(fr.placement.translation)
        site.quat = _quat(fr.placement.rotation)
        frame = site.name
    names = []
    for kind, stype in (('quat', mujoco.mjtSensor.mjSENS_FRAMEQUAT),
                        ('gyro', mujoco.mjtSensor.mjSENS_GYRO),
                        ('acc', mujoco.mjtSensor.mjSENS_ACCELEROMETER)):
        s = spec.add_sensor()
        s.name = f'imu_{kind}'
        s.type = stype
        s.objtype = mujoco.mjtObj.mjOBJ_SITE
        s.objname = frame
        names.append(s.name)
    info.imu_sensors = tuple(names)


def parameters_from_mujoco(robot: Robot, mj_model) -> np.ndarray:
    """Standard parameters (pinocchio order) of the bodies of a compiled MuJoCo model.

    The inverse of what :func:`build_spec` writes: used to check the builder and to report the
    truth the physics really used.
    """
    model = robot.model.copy()
    for j, name in enumerate(body_names(model), start=1):
        bid = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_BODY, name)
        if bid < 0:
            raise BadInputError(f'body {name} not in the MuJoCo model')
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, mj_model.body_iquat[bid])
        rot = rot.reshape(3, 3)
        i_c = rot @ np.diag(mj_model.body_inertia[bid]) @ rot.T
        model.inertias[j] = pin.Inertia(float(mj_model.body_mass[bid]),
                                        np.array(mj_model.body_ipos[bid]), i_c)
    return get_parameters(model)
