"""One Solo12 run read out as setups with other sensor conventions record it, and the checks
that the buffer's windows of such a readout are the canonical run's (core and node tests)."""

import copy

import numpy as np
import pinocchio as pin
import yaml
from scipy.spatial.transform import Rotation

from legid_ros.core.conventions.convert import quat_matrices, rotate_wrench
from legid_ros.core.pipeline.replay import recording_windows
from legid_ros.core.robot import load_robot
from legid_ros.core.sim.conventions import OTHER_CONVENTIONS, read_out

READOUTS = dict(OTHER_CONVENTIONS)
SAMPLES = 3000  # 3 s of the run [samples]
FT_RPY = (0.3, -0.2, 0.5)  # [rad]


def _robot(desc: dict, urdf, path) -> object:
    desc = copy.deepcopy(desc)
    desc['urdf'] = str(urdf)
    path.write_text(yaml.safe_dump(desc))
    return load_robot(str(path))


def make_setups(solo12, solo12_run, root):
    """Canonical robot and run, and per readout (robot of that setup, its raw readout); the
    descriptions are written under ``root``."""
    desc = copy.deepcopy(solo12.description)
    frames = desc.setdefault('frames', {})
    for name, f in desc['feet'].items():  # F/T frames turned in their links: foot axes differ
        frames[f'{name}_ft'] = {'parent': f['link'], 'xyz': [0, 0, 0], 'rpy': list(FT_RPY)}
        f['ft_frame'] = f'{name}_ft'
    canon = _robot(desc, solo12.urdf_path, root / 'canonical.yaml')
    run = solo12_run.slice(0, SAMPLES)
    r_lt = pin.rpy.rpyToMatrix(*FT_RPY)  # F/T axes in the link; the run's wrenches: link axes
    for foot, w in run.foot_wrench.items():
        run.foot_wrench[foot] = rotate_wrench(w, np.broadcast_to(r_lt.T, (len(w), 3, 3)))
    out = {name: (_robot(ro.description(canon), solo12.urdf_path, root / f'{name}.yaml'),
                  read_out(run, canon, ro)) for name, ro in READOUTS.items()}
    return canon, run, out


def rows(rec, robot, conventions, joint_order=None):
    """Every row the buffer's core emits for ``rec`` (first copy of each stamp), by field."""
    return window_rows(list(recording_windows(rec, robot, conventions=conventions,
                                              joint_order=joint_order)), list(robot.feet))


def window_rows(wins, feet):
    """Unique rows (first copy of each stamp) of unpacked windows, by field; ``t`` made
    relative to the first row."""
    t = np.concatenate([w.t for w in wins])
    _, first = np.unique(t, return_index=True)

    def cat(get):
        return np.concatenate([get(w) for w in wins])[first]
    return {'t': t[first] - t[first][0], 'q': cat(lambda w: w.q),
            'quat': cat(lambda w: w.imu_quat),
            'gyro': cat(lambda w: w.imu_gyro), 'acc': cat(lambda w: w.imu_acc),
            'wrench': {f: cat(lambda w, f=f: w.foot_wrench[f]) for f in feet},
            'zmp': cat(lambda w: w.zmp_world), 'contact': cat(lambda w: w.contact),
            'ok': cat(lambda w: w.ok), 'fz': cat(lambda w: w.fz)}


def foot_spread(run, robot) -> np.ndarray:
    """Per sample, the largest distance between two feet's sole frames [m]: how far a
    foot's contact point is from the measured CoP at most."""
    from legid_ros.core.contact.cop import frame_placements

    ids = [robot.frame_id(f.sole_frame) for f in robot.feet.values()]
    q = np.array([robot.configuration(x) for x in run.q])
    pos = np.stack([m[:, :, 3] for m in frame_placements(robot, q, ids).values()], axis=1)
    return np.max(np.linalg.norm(pos[:, :, None] - pos[:, None], axis=3), axis=(1, 2))


def imu_tilt_error(run, robot) -> np.ndarray:
    """Per sample, the angle [rad] between the base orientation the IMU gives and the true
    one (simulator): the rotation error a world-axes wrench is turned back with."""
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, pin.neutral(robot.model))
    r_bi = data.oMf[robot.frame_id(robot.imu_frame)].rotation  # IMU frame fixed to the base
    r_wb_imu = quat_matrices(run.imu_quat) @ r_bi.T
    r_wb_true = quat_matrices(run.base_pose_true[:, 3:7])
    err = np.swapaxes(r_wb_imu, 1, 2) @ r_wb_true
    return np.linalg.norm(Rotation.from_matrix(err).as_rotvec(), axis=1)




def assert_same_windows(got, ref, run, canon, world: bool, exact_atol: float = 1e-9):
    """``got`` (rows of a setup's readout) are ``ref`` (the canonical run's): q, IMU, ok flags
    and contacts to ``exact_atol``; wrenches exactly or, from world axes (``world``), within
    the IMU tilt error's rotation of each wrench (theta |f|), and the measured CoP within
    what those force errors can move it."""
    assert len(ref['t']) == len(got['t']) == SAMPLES
    np.testing.assert_allclose(got['t'], ref['t'], atol=1e-6)
    assert np.array_equal(got['ok'], ref['ok']) and ref['ok'][10:].all()
    np.testing.assert_allclose(got['q'], ref['q'], atol=exact_atol, rtol=0)
    assert np.allclose(np.abs(np.sum(got['quat'] * ref['quat'], axis=1)), 1.0, atol=1e-9)
    np.testing.assert_allclose(got['gyro'], ref['gyro'], atol=1e-9)
    np.testing.assert_allclose(got['acc'], ref['acc'], atol=1e-9)
    theta = imu_tilt_error(run, canon) if world else np.zeros(SAMPLES)
    for foot, w in ref['wrench'].items():
        for part in (slice(0, 3), slice(3, 6)):
            err = np.linalg.norm(got['wrench'][foot][:, part] - w[:, part], axis=1)
            bound = theta * np.linalg.norm(w[:, part], axis=1) + 1e-9
            assert np.all(err <= bound), (foot, float(np.max(err - bound)))
    np.testing.assert_array_equal(got['contact'], ref['contact'])
    # CoP of point feet: sum fz_i p_i / sum fz_i; each fz_i off by at most theta |f_i| moves it
    # by at most sum theta |f_i| |p_i - cop| / sum fz_i <= theta sum |f_i| spread / sum fz_i
    f_sum = sum(np.linalg.norm(w[:, :3], axis=1) for w in ref['wrench'].values())
    bound = theta * f_sum * foot_spread(run, canon) / np.abs(ref['fz']) + 1e-9
    zmp_err = np.linalg.norm(got['zmp'] - ref['zmp'], axis=1)
    both = np.isfinite(ref['zmp']).all(axis=1)
    np.testing.assert_array_equal(np.isfinite(got['zmp']).all(axis=1), both)
    assert np.all(zmp_err[both] <= bound[both]), float(np.max(zmp_err[both] - bound[both]))
