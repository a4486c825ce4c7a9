"""Physical checks of a recording against its description (``legid check``).

On the recording as identification reads it (internal convention, the force sensing it will
use), with the base orientation the IMU gives:

- the feet's forces, summed in the world, carry the weight upwards (sign, total mass, and
  the frame the forces are expressed in: a sum that is not vertical);
- at rest, the IMU's gravity direction is the stance feet's ground normal (mounting
  rotation ``imu.rpy``, ``imu.frame``); over the whole run, the IMU's up follows that normal
  as the trunk tilts (a yaw of the mounting, invisible at rest);
- world-axes foot wrenches balance the moments at rest in the IMU's world
  (``imu.heading_rad``: the yaw of the IMU's reference in the forces' world, estimated from
  that balance, forces and moments);
- a foot whose force vanishes stands while another is lifted (topics of two feet swapped);
- a foot's CoP from its sole sensors matches the CoP of its wrench, and lies on its sole.

Each problem is one line naming the description key and the fix.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import numpy as np
from scipy.spatial.transform import Rotation

from legid_ros.core.contact.cop import frame_placements

GRAVITY = 9.81  # [m/s^2]
MAX_SAMPLES = 1500  # samples looked at, evenly spread
LOAD_TOLERANCE = 0.25  # [-] median vertical force within 25 % of the weight
TILT_MAX_DEG = 12.0  # [deg] median angle of the summed force from the vertical
IMU_ANGLE_MAX_DEG = 3.0  # [deg] IMU gravity vs stance ground normal at rest
TILT_SPREAD_MIN_DEG = 0.5  # [deg] horizontal spread of the ground normal: mounting yaw seen
COP_MAX_M = 0.003  # [m] sole-sensor CoP vs wrench CoP (median; 1.3 mm on Talos's run)
SOLE_MARGIN_M = 0.01  # [m] wrench CoP outside the sole rectangle by more than this
HEADING_MAX_DEG = 3.0  # [deg] yaw of the world-axes forces against the IMU's reference


def _angle_deg(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    cos = np.sum(a * b, axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


class WorldView:
    """A recording's samples (evenly spread) in the world the IMU gives: base orientation,
    frame placements, foot forces in world axes, feet heights."""

    def __init__(self, robot, rec, source: str, max_samples: int = MAX_SAMPLES):
        self.robot, self.source = robot, source
        idx = np.unique(np.linspace(0, rec.n - 1, min(max_samples, rec.n)).astype(int))
        ok = np.all(np.isfinite(rec.imu_quat[idx]), axis=1) & np.all(np.isfinite(
            rec.q[idx]), axis=1)
        self.idx = idx = idx[ok]
        self.gyro, self.acc = rec.imu_gyro[idx], rec.imu_acc[idx]
        self.joints = rec.q[idx]
        self.velocities, self.t = rec.qd[idx], rec.t[idx]  # [rad/s], [s]
        model = robot.model
        q0 = np.zeros((len(idx), model.nq))
        q0[:, 6] = 1.0
        q0[:, 7:] = rec.q[idx] if robot.has_only_scalar_joints else np.nan
        imu_id = robot.frame_id(robot.imu_frame)
        ids = {imu_id}
        for f, foot in robot.feet.items():
            ids |= {robot.frame_id(foot.wrench_frame), robot.frame_id(foot.sole_frame)}
            ids |= {robot.frame_id(s.frame) for s in foot.force_sensors}
        base = frame_placements(robot, q0, sorted(ids))  # in the base frame
        r_bf = base[imu_id][:, :, :3]
        r_wf = Rotation.from_quat(rec.imu_quat[idx]).as_matrix()
        r_wb = np.einsum('nij,nkj->nik', r_wf, r_bf)  # R_wf R_bf^T
        self.r_wb, self.r_bf = r_wb, r_bf
        self.world = {i: (np.einsum('nij,njk->nik', r_wb, m[:, :, :3]),
                          np.einsum('nij,nj->ni', r_wb, m[:, :, 3])) for i, m in base.items()}
        self.force_w: Dict[str, np.ndarray] = {}
        self.moment_w: Dict[str, np.ndarray] = {}  # about the F/T frame's origin (wrench)
        self.fsr: Dict[str, np.ndarray] = {}
        for f, foot in robot.feet.items():
            if source == 'fsr' and f in rec.fsr:
                rot = self.world[robot.frame_id(foot.sole_frame)][0]
                self.fsr[f] = rec.fsr[f][idx]
                self.force_w[f] = rot[:, :, 2] * self.fsr[f].sum(axis=1, keepdims=True)
            elif f in rec.foot_wrench:
                rot = self.world[robot.frame_id(foot.wrench_frame)][0]
                self.force_w[f] = np.einsum('nij,nj->ni', rot, rec.foot_wrench[f][idx, :3])
                self.moment_w[f] = np.einsum('nij,nj->ni', rot, rec.foot_wrench[f][idx, 3:])
        self.wrench = {f: rec.foot_wrench[f][idx] for f in rec.foot_wrench}
        self.weight = robot.total_mass * GRAVITY

    def height(self, foot: str) -> np.ndarray:
        """World height of the foot's contact point relative to the base [m]."""
        return self.world[self.robot.frame_id(self.robot.feet[foot].sole_frame)][1][:, 2]


def _load(v: WorldView, out: List[str]) -> None:
    if len(v.force_w) != len(v.robot.feet):
        return
    total = sum(v.force_w.values())
    fz = float(np.median(total[:, 2]))
    keys = ('feet.*.expressed_in / ft_frame / frame_id' if v.source == 'wrench' else
            'feet.*.force_sensors')
    if fz < -(1 - LOAD_TOLERANCE) * v.weight:
        out.append(f'foot forces: they sum to {fz:.0f} N upwards (median), minus the weight '
                   f'{v.weight:.0f} N: the bag has the force of the foot on the ground; fix: '
                   'negate it at the source (ground-on-foot forces are read)')
        return
    tilt = float(np.median(_angle_deg(total, np.array([0.0, 0.0, 1.0]))))
    if tilt > TILT_MAX_DEG:
        out.append(f'foot forces: their sum is {tilt:.0f} deg from the vertical (median, with '
                   f'the IMU base orientation): they are not in the axes the description says; '
                   f'fix: check {keys} (world axes: expressed_in: world)')
    elif abs(fz - v.weight) > LOAD_TOLERANCE * v.weight:
        out.append(f'foot forces: they carry {fz:.0f} N (median vertical sum), the description '
                   f'weighs {v.weight:.0f} N; fix: the URDF masses / locked_joints, the force '
                   'units, or a missing foot')


def _rest(v: WorldView) -> np.ndarray:
    """Samples at rest: small rotation rate, specific force near g."""
    return (np.linalg.norm(v.gyro, axis=1) < 0.05) & (
        np.abs(np.linalg.norm(v.acc, axis=1) - GRAVITY) < 0.3)


def _stance_normals(v: WorldView, samples: np.ndarray, every_foot: bool = False
                    ) -> Tuple[np.ndarray, np.ndarray]:
    """The stance feet's ground normal in base axes at ``samples`` where it is known (three
    loaded point feet or a loaded flat foot; ``every_foot``: only where every foot is loaded,
    so that which topic is which foot does not matter): (sample indices, unit normals (K, 3)).
    """
    robot = v.robot
    feet = [f for f in robot.feet if f in v.force_w]
    if len(feet) != len(robot.feet):
        return np.zeros(0, int), np.zeros((0, 3))
    load = np.column_stack([np.linalg.norm(v.force_w[f], axis=1) for f in feet])
    loaded = load > 0.1 * v.weight / len(feet)  # (norms: whatever the IMU says)
    ks, normals = [], []
    for k in samples:
        on = [f for j, f in enumerate(feet) if loaded[k, j]]
        if every_foot and len(on) < len(feet):
            continue
        r_bw = v.r_wb[k].T
        if all(robot.feet[f].contact == 'point' for f in on) and len(on) >= 3:
            pts = np.array([r_bw @ v.world[robot.frame_id(robot.feet[f].sole_frame)][1][k]
                            for f in on])
            n = np.linalg.svd(pts - pts.mean(axis=0))[2][-1]
            n *= np.sign(n @ (-pts.mean(axis=0)) + 1e-12)  # towards the base
        elif any(robot.feet[f].contact == 'flat' for f in on):
            flat = [f for f in on if robot.feet[f].contact == 'flat']
            n = sum(r_bw @ v.world[robot.frame_id(robot.feet[f].sole_frame)][0][k][:, 2]
                    for f in flat)
        else:
            continue
        ks.append(k)
        normals.append(n / np.linalg.norm(n))
    return np.array(ks, int), np.array(normals).reshape(-1, 3)


def _imu(v: WorldView, out: List[str]) -> None:
    """IMU gravity direction vs the stance feet's ground normal, at rest (base frame)."""
    robot = v.robot
    ks, normals = _stance_normals(v, np.flatnonzero(_rest(v)))
    if len(ks) < 10:
        return
    ups = np.einsum('nij,nj->ni', v.r_bf[ks], v.acc[ks])  # the accelerometer's up, base axes
    acc_deg = float(np.median(_angle_deg(ups, normals)))
    quat_up = v.r_wb[ks][:, 2, :]  # the orientation's up in base axes: row 2 of R_wb
    quat_deg = float(np.median(_angle_deg(quat_up, normals)))
    worst = max(acc_deg, quat_deg)
    if worst > IMU_ANGLE_MAX_DEG:
        out.append(f'imu.rpy: at rest the IMU\'s gravity is {acc_deg:.1f} deg (accelerometer) '
                   f'/ {quat_deg:.1f} deg (orientation) from the stance feet\'s ground normal; '
                   f'fix: imu.rpy (sensor axes in imu.frame {robot.imu_frame!r}) and imu.frame '
                   'to how the IMU is mounted')


def mounting_turn(v: WorldView) -> Optional[np.ndarray]:
    """Rotation (3, 3) in base axes that takes the stance feet's ground normal to the up of
    the IMU's orientation over the whole recording (identity when ``imu.rpy`` is right), or
    None when the trunk tilts too little against the ground for its turn about the vertical
    to be seen.

    A yaw of the mounting leaves gravity at rest on the base's z axis, so the rest check
    cannot see it; but as the trunk tilts, the IMU's up turns the wrong way (a 90 deg yaw
    turns a roll into a pitch). The best rotation between the two unit-vector sets (Kabsch)
    holds that yaw; it is determined when the normals spread horizontally by at least
    ``TILT_SPREAD_MIN_DEG``. Only samples with every foot loaded count (swapped force topics
    would otherwise put a lifted foot in the ground plane).
    """
    ks, normals = _stance_normals(v, np.arange(len(v.idx)), every_foot=True)
    if len(ks) < 10:
        return None
    spread = np.degrees(np.sqrt(np.linalg.eigvalsh(np.cov(normals[:, :2].T)).max()))
    if spread < TILT_SPREAD_MIN_DEG:
        return None
    ups = v.r_wb[ks][:, 2, :]
    u, _, vt = np.linalg.svd(normals.T @ ups)
    d = np.sign(np.linalg.det(vt.T @ u.T))
    return vt.T @ np.diag([1.0, 1.0, d]) @ u.T


def mounting_rpy(v: WorldView) -> Optional[Tuple[float, np.ndarray]]:
    """The ``imu.rpy`` [rad] that makes the IMU's up follow the stance feet's ground normal as
    the trunk tilts (:func:`mounting_turn`), with the angle [deg] the described mounting is
    off by; None when the tilts do not show it."""
    turn = mounting_turn(v)
    if turn is None:
        return None
    r_bf = v.r_bf[0]  # the IMU frame in the base (fixed to it)
    m = r_bf.T @ turn @ r_bf  # = R_fs(described) R_fs(true)^T, in the IMU frame's axes
    rpy = Rotation.from_matrix(m.T @ v.robot.imu.rotation).as_euler('xyz')
    return float(np.degrees(Rotation.from_matrix(turn).magnitude())), rpy


def proposed_imu_rpy(robot, rec, source: str) -> Optional[Tuple[float, np.ndarray]]:
    """:func:`mounting_rpy` of the recording ``rec`` read with ``robot``'s description and the
    force sensing ``source``; None when it cannot be seen (``legid describe --bag``)."""
    if not robot.floating or rec.n < 10:
        return None
    v = WorldView(robot, rec, source)
    return mounting_rpy(v) if len(v.idx) >= 10 else None


def _mounting(v: WorldView, out: List[str]) -> None:
    """A mounting rotation (mostly its yaw) that the rest check cannot see: one line with the
    ``imu.rpy`` that makes the IMU's up follow the ground normal."""
    found = mounting_rpy(v)
    if found is None or found[0] <= IMU_ANGLE_MAX_DEG:
        return
    angle, rpy = found
    out.append(f'imu.rpy: as the trunk tilts, the IMU\'s up follows the stance feet\'s ground '
               f'normal only turned by {angle:.0f} deg (a yaw of the mounting is invisible at '
               f'rest); fix: imu.rpy: [{rpy[0]:.3f}, {rpy[1]:.3f}, {rpy[2]:.3f}] (sensor axes '
               f'in imu.frame {v.robot.imu_frame!r})')


def _swapped(v: WorldView, out: List[str]) -> None:
    """A foot whose force vanishes while it stands and another foot is lifted."""
    feet = [f for f in v.robot.feet if f in v.force_w]
    if len(feet) < 2:
        return
    h = np.column_stack([v.height(f) for f in feet])
    lifted = h - h.min(axis=1, keepdims=True) > 0.01  # [m]
    fz = np.column_stack([v.force_w[f][:, 2] for f in feet])
    empty = fz < 0.05 * v.weight / len(feet)
    for j, f in enumerate(feet):
        wrong = empty[:, j] & ~lifted[:, j] & lifted.any(axis=1)
        if wrong.sum() < max(5, 0.02 * len(fz)):
            continue
        other = feet[int(np.argmax(lifted[wrong].sum(axis=0)))]
        key = 'force_sensors' if v.source == 'fsr' else 'wrench_topic'
        out.append(f'feet.{f}.{key}: its force vanishes while foot {f} stands and foot '
                   f'{other} is lifted ({wrong.sum()} of {len(fz)} samples): the topics of '
                   f'{f} and {other} look swapped; fix: exchange them')


def _cop(v: WorldView, rec_fsr: Dict[str, np.ndarray], out: List[str]) -> None:
    """Per flat foot: sole-sensor CoP vs wrench CoP; wrench CoP within the sole."""
    robot = v.robot
    for f, foot in robot.feet.items():
        if foot.contact != 'flat' or f not in v.wrench:
            continue
        sole = robot.frame_id(foot.sole_frame)
        ft = robot.frame_id(foot.wrench_frame)
        r_s, p_s = v.world[sole]
        r_t, p_t = v.world[ft]
        w = v.wrench[f]
        f_w = np.einsum('nij,nj->ni', r_t, w[:, :3])
        n_w = np.einsum('nij,nj->ni', r_t, w[:, 3:]) + np.cross(p_t - p_s, f_w)
        f_s, n_s = np.einsum('nji,nj->ni', r_s, f_w), np.einsum('nji,nj->ni', r_s, n_w)
        on = f_s[:, 2] > 0.2 * v.weight / len(robot.feet)
        if on.sum() < 10:
            continue
        cop = np.column_stack([-n_s[on, 1], n_s[on, 0]]) / f_s[on, 2:3]
        if foot.sole_size is not None:
            excess = np.abs(cop) - foot.sole_size / 2
            over = float(np.percentile(excess.max(axis=1), 90))
            if over > SOLE_MARGIN_M:
                out.append(f'feet.{f}.ft_frame: the wrench\'s CoP leaves the sole by '
                           f'{over * 1e3:.0f} mm (90th percentile) when loaded: the wrench is '
                           'not about the '
                           f'origin of {foot.wrench_frame!r}; fix: ft_frame at the '
                           'sensor (a frame under frames: with its offset)')
        if f in rec_fsr and foot.force_sensors:
            pos = robot.force_sensor_positions(f)[:, :2]
            fsr = rec_fsr[f][on]
            cop_s = fsr @ pos / np.maximum(fsr.sum(axis=1, keepdims=True), 1e-9)
            dev = float(np.median(np.linalg.norm(cop_s - cop, axis=1)))
            if dev > COP_MAX_M:
                out.append(f'feet.{f}.force_sensors: the sole sensors\' CoP is {dev * 1e3:.0f} mm'
                           ' from the wrench\'s (median, loaded): a sensor position or frame '
                           'is off; fix: each sensor\'s xyz / frame')


def physical_problems(robot, rec, source: str) -> List[str]:
    """Problems of the recording ``rec`` (as identification reads it) against ``robot``,
    with the force sensing ``source`` ('wrench' or 'fsr'); one line each."""
    if not robot.floating or rec.n < 10:
        return []
    v = WorldView(robot, rec, source)
    if len(v.idx) < 10:
        return []
    out: List[str] = []
    _imu(v, out)
    if not out:
        _mounting(v, out)
    if not out:  # the next ones need the IMU's base orientation
        _load(v, out)
    if not out:
        _swapped(v, out)
    if not out and source == 'wrench':
        from legid_ros.core.conventions.heading import heading_correction
        turn = heading_correction(robot, rec) if any(
            foot.expressed_in == 'world' for foot in robot.feet.values()) else None
        if turn is not None and abs(turn) > np.radians(HEADING_MAX_DEG):
            out.append(f'imu.heading_rad: the world-axes foot forces balance the moments at '
                       f'rest only turned by {np.degrees(turn):.1f} deg: the IMU\'s reference '
                       f'is yawed in their world; fix: set imu.heading_rad: '
                       f'{robot.imu.heading_rad + turn:.3f}')
    _cop(v, {f: rec.fsr[f][v.idx] for f in rec.fsr}, out)
    return out
