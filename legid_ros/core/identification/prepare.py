"""From a :class:`Recording` to the floating-base samples every method uses.

The measurement side of the ZMP-feedback identification of Wu & Gao 2021 (support foot flat
and still, measured ZMP from the sole sensors), shared by every floating-base method.

Steps: drop non-finite samples (counted and reported); zero-phase Butterworth on joint
positions, foot forces and joint efforts (same filter on all, so measured and model ZMP, and
measured and model efforts, see the same bandwidth); velocities and accelerations by
Savitzky-Golay ('savgol') or central finite differences ('fd'); the first and last
``edge_s`` seconds dropped (the zero-phase filter's start-up and end transients: on
noise-free data they put up to 8 mm of error into the last 0.2 s); support foot from the
vertical forces; floating-base state from the support foot's kinematics (roll/pitch from
the IMU by default); measured ZMP from the sole sensors ('fsr') or the 6-axis foot wrenches
('wrench'). ``*_true`` fields are used only when asked for (``base='true'``,
``diff='exact'``, ``zmp_source='true'``): unit tests of the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Optional

import numpy as np

from legid_ros.core import signals
from legid_ros.core.conventions.sensing import resolve_zmp_source
from legid_ros.core.errors import BadInputError
from legid_ros.core.recording import Recording
from legid_ros.core.contact import (ContactThresholds, cop_frames, measured_cop,
                                    stance_base_state)
from legid_ros.core.contact.base_state import imu_linear_acceleration
from legid_ros.core.contact.choices import BASES, ContactTally, PreparationChoice
from legid_ros.core.contact.cop import normal_forces, up_axes
from legid_ros.core.contact.rule import OFF_FRACTION, ON_FRACTION, contact_states
from legid_ros.core.robot import Robot


@dataclass
class PrepareOptions:
    """Options of :func:`prepare`.

    Attributes:
        diff: 'savgol', 'fd' or 'exact' (recording's qdd_true; tests only).
        window_s: Savitzky-Golay window [s] (made at least 5 samples).
        cutoff_hz: Zero-phase Butterworth cut-off on positions (the joints' and the IMU's
            orientation), forces and efforts [Hz] (None or >= Nyquist: no filter).
        zmp_source: 'auto' (the description's force_sensing if recorded, else sole sensors
            if present, else wrenches: :func:`~legid_ros.core.conventions.sensing.
            resolve_zmp_source`), 'fsr', 'wrench', 'true'.
        use_imu: Base roll/pitch from the IMU (halves the model ZMP's error floor in physics).
        base: 'support' (kinematics from the support foot: Wu & Gao's flat, still sole),
            'contacts' (orientation and angular rates from the IMU, translation from every
            stance contact point: for tall robots whose soles rock, and point feet), 'auto'
            (chosen from the contacts: :mod:`legid_ros.core.contact.choices`) or 'true'
            (ground truth).
        support: 'auto' (from the forces), or a foot name for every sample.
        contact_on_fraction: A foot touches down above this fraction of the robot's weight
            (:mod:`legid_ros.core.contact.rule`, the buffer's rule) [-].
        contact_off_fraction: A foot lifts off below this fraction of the weight [-].
        step: Keep every step-th sample after filtering and differentiation (e.g. 10 turns
            1 kHz into 100 Hz; choose the cut-off below the new Nyquist frequency).
        lag: If set, Wu & Gao's first-order lag filter constant on the measured ZMP instead
            of the Butterworth on the forces.
        edge_s: Time dropped at each end of the recording [s] (None: ``3 / cutoff_hz`` when
            the Butterworth filter runs, else 0; nothing is dropped from recordings shorter
            than 4 edges).
        single_support_only: Drop the samples with more than one foot loaded (on a physical
            robot the soft contacts of two feet make the model ZMP of a double-support sample
            several times less accurate than a single-support one: 1.5-12 mm against 0.33 mm
            on the MuJoCo biped, ``legid bench accuracy --protocol swap``).
        transition_s: Also drop the samples closer than this to a change of any foot's
            contact state (touch-down, lift-off: impacts and load transfer) [s]; 0: none
            dropped (default); None: the longest of 0.5 s down to 0.03 s that keeps half of
            the samples (:mod:`legid_ros.core.contact.choices`).
        min_contacts: Also drop the samples with fewer feet in contact than this (0: none
            dropped). A trot's two-foot phases of 0.2 s (two point feet on a diagonal) are
            never far from a contact change: on Solo12's trot in MuJoCo (14 Hz, the IMU's
            base acceleration) the model ZMP with the true parameters is 2.2 / 1.8 mm RMS
            (x / y) off the measured CoP on the two-foot samples 0.06 s from any change,
            against 0.67 / 0.57 mm on the four-foot ones.
        gyro_cutoff_hz: Zero-phase low-pass on the gyro before its derivative (base
            'contacts'; default half of ``cutoff_hz``: the derivative amplifies the gyro's
            noise; on Talos in MuJoCo the model ZMP floor is 2.57 mm at 6 Hz, 1.08 mm at 3 Hz,
            1.42 mm at 2 Hz) [Hz].
        base_acc: The base's linear acceleration from 'contacts' (the stance feet still: the
            double derivative of the joint kinematics) or 'imu' (the accelerometer's specific
            force plus gravity, filtered like the forces:
            :func:`~legid_ros.core.contact.base_state.imu_linear_acceleration`). On 30 s of
            Solo12's trot in MuJoCo (20 Hz, four-foot rows 0.1 s from any contact change) the
            model ZMP with the true parameters is 3.8 / 2.4 mm RMS (x / y) off the measured CoP
            with the contacts' estimate, 0.8 / 0.7 mm with the IMU's (0.5 / 0.5 mm with the
            true base): 59 % of the trunk's acceleration there is 10-20 Hz content, and the
            contacts' estimate (joint positions differentiated twice, the gyro's derivative
            filtered at half the cut-off) is 0.10 / 0.08 m/s^2 RMS off, the accelerometer's
            0.02 (its own noise). On a slow motion the contacts' is as good (Solo12's standing
            excitation at 14 Hz: 0.013 against 0.019 m/s^2). Ignored with base 'true'.
    """

    diff: str = 'savgol'
    window_s: float = 0.15
    cutoff_hz: Optional[float] = 6.0
    zmp_source: str = 'auto'
    use_imu: bool = True
    base: str = 'auto'
    support: str = 'auto'
    contact_on_fraction: float = ON_FRACTION
    contact_off_fraction: float = OFF_FRACTION
    step: int = 1
    lag: Optional[float] = None
    edge_s: Optional[float] = None
    single_support_only: bool = False
    transition_s: Optional[float] = 0.0
    min_contacts: int = 0
    gyro_cutoff_hz: Optional[float] = None
    base_acc: str = 'contacts'


@dataclass
class Samples:
    """Floating-base samples ready for the regressors.

    Attributes:
        t: Times [s] (N,).
        q, v, a: Floating-base configuration, velocity, acceleration (N, nq|nv).
        zmp: Measured ZMP in the world [m] (N, 2).
        fz: Measured total vertical force [N] (N,).
        tau: Measured joint efforts [N.m] (N, nj).
        foot_wrench: Per foot, ground-on-foot wrench in its F/T frame (N, 6), filtered.
        support: Support foot name per sample (N,).
        double_support: Samples with both feet loaded (N,).
        dropped: Reasons -> number of raw samples dropped.
        zmp_true: Ground-truth ZMP if the recording has it (N, 2).
        ankle_ft: Per foot, raw ankle F/T reading (leg-on-foot wrench) in its F/T frame
            (N, 6), filtered like the wrenches; empty if the recording has none.
        choice: The base state's source and the margin around contact changes, as used
            (:class:`legid_ros.core.contact.choices.PreparationChoice`).
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    zmp: np.ndarray
    fz: np.ndarray
    tau: np.ndarray
    foot_wrench: Dict[str, np.ndarray]
    support: np.ndarray
    double_support: np.ndarray
    dropped: Dict[str, int] = field(default_factory=dict)
    zmp_true: Optional[np.ndarray] = None
    ankle_ft: Dict[str, np.ndarray] = field(default_factory=dict)
    choice: Optional[PreparationChoice] = None

    @property
    def n(self) -> int:
        """Number of samples."""
        return len(self.t)

    def take(self, idx) -> 'Samples':
        """Subset of samples (index array or slice)."""
        def cut(x):
            return None if x is None else x[idx]
        return Samples(self.t[idx], self.q[idx], self.v[idx], self.a[idx], self.zmp[idx],
                       self.fz[idx], self.tau[idx],
                       {k: w[idx] for k, w in self.foot_wrench.items()}, self.support[idx],
                       self.double_support[idx], dict(self.dropped), cut(self.zmp_true),
                       {k: w[idx] for k, w in self.ankle_ft.items()})


def prepare(rec: Recording, robot: Robot, options: Optional[PrepareOptions] = None
            ) -> Samples:
    """Turn a recording into floating-base samples (see the module docstring).

    Raises:
        BadInputError: too few valid samples, unknown options, missing sensors.
    """
    o = options or PrepareOptions()
    if rec.joint_names != robot.actuated_joint_names:
        raise BadInputError('recording joint order differs from the robot\'s: '
                            f'{rec.joint_names[:3]}... vs {robot.actuated_joint_names[:3]}...')
    feet = list(robot.feet)
    src = o.zmp_source
    if src == 'auto':  # as legid check decides it (core.conventions.sensing)
        src = resolve_zmp_source(robot, src, all(f in rec.fsr for f in feet),
                                 all(f in rec.foot_wrench for f in feet)).source
    if src == 'fsr' and not all(f in rec.fsr for f in feet):
        raise BadInputError('recording has no sole-sensor forces for every foot')
    if src == 'wrench' and not all(f in rec.foot_wrench for f in feet):
        raise BadInputError('recording has no foot wrench for every foot')
    if src == 'true' and rec.zmp_true is None:
        raise BadInputError('recording has no true ZMP')
    force = {f: (rec.fsr[f] if src == 'fsr' else rec.foot_wrench[f]) for f in feet} \
        if src != 'true' else {f: rec.foot_wrench[f] for f in feet if f in rec.foot_wrench}
    checks = {'q': rec.q, 'imu': rec.imu_quat if o.use_imu else None}
    checks.update({f'force {f}': x for f, x in force.items()})
    checks.update({f'ankle F/T {f}': x for f, x in rec.ankle_ft.items()})
    if o.diff == 'exact':
        checks['qdd_true'] = rec.qdd_true
    if o.base_acc not in ('contacts', 'imu'):
        raise BadInputError(f"base_acc must be 'contacts' or 'imu', not {o.base_acc!r}")
    imu_acc = o.base_acc == 'imu' and o.base != 'true'
    if imu_acc:
        if rec.imu_acc is None or not o.use_imu:
            raise BadInputError("base_acc 'imu' needs the IMU's accelerometer (and use_imu)")
        checks['imu_acc'] = rec.imu_acc
    keep = np.ones(rec.n, bool)
    dropped = {}
    for name, arr in checks.items():
        if arr is None:
            continue
        ok = signals.finite_rows(arr)
        bad = int(np.sum(keep & ~ok))
        if bad:
            dropped[f'non-finite {name}'] = bad
        keep &= ok
    t = rec.t[keep]
    if t.size < 7:
        raise BadInputError(f'only {t.size} valid samples (dropped: {dropped})')
    rate = (t.size - 1) / (t[-1] - t[0])
    q_j = rec.q[keep]
    force = {f: x[keep] for f, x in force.items()}
    wrench_raw = {f: rec.foot_wrench[f][keep] for f in rec.foot_wrench}
    ankle_raw = {f: np.asarray(x, float)[keep] for f, x in rec.ankle_ft.items()}
    imu_q = np.asarray(rec.imu_quat, float)[keep] if o.use_imu and rec.imu_quat is not None \
        else None
    filtered = bool(o.cutoff_hz and o.cutoff_hz < 0.45 * rate)
    if filtered:
        def filt(x):
            return signals.butter_zero_phase(x, o.cutoff_hz, rate)
        q_f = filt(q_j)
        if o.lag is None:
            force = {f: filt(x) for f, x in force.items()}
        wrench = {f: filt(x) for f, x in wrench_raw.items()}
        ankle = {f: filt(x) for f, x in ankle_raw.items()}
        # the efforts through the same filter (parallel filtering: the torque rows' two sides
        # at one bandwidth; unfiltered, their noise and so their WLS weight grew with the rate
        # and decimation aliased it)
        tau_f = filt(rec.tau[keep])
        # and the IMU's orientation, the base's position coordinates beside the joints'
        # (unfiltered, its white jitter entered every row at the recording's rate)
        if imu_q is not None:
            imu_q = signals.smooth_quaternions(imu_q, filt)
    else:
        q_f, wrench, ankle, tau_f = q_j, wrench_raw, ankle_raw, rec.tau[keep]
    # drop the filter's edge transients and keep every step-th sample: the filters above run
    # at the full rate (they are the anti-alias filters of this decimation), the derivatives
    # and everything after only at the kept samples
    edge = o.edge_s if o.edge_s is not None else (3.0 / o.cutoff_hz if filtered else 0.0)
    if edge < 0:
        raise BadInputError(f'edge_s must be >= 0 s, got {edge}')
    i0, i1 = 0, t.size
    if edge > 0 and t[-1] - t[0] > 4 * edge:
        i0 = int(np.searchsorted(t, t[0] + edge))
        i1 = int(np.searchsorted(t, t[-1] - edge, side='right'))
        dropped[f'filter edges ({edge:g} s each end)'] = t.size - (i1 - i0)
    sel = np.arange(i0, i1, max(1, int(o.step)))
    if o.diff == 'exact':
        q_f, qd, qdd = q_j[sel], rec.qd[keep][sel], rec.qdd_true[keep][sel]
    else:
        q_f, qd, qdd = signals.derivatives(t, q_f, 'savgol' if o.diff == 'savgol' else 'fd',
                                           o.window_s, at=sel)
    t_all = t
    t, tau = t[sel], tau_f[sel]
    force_full = force
    force = {f: x[sel] for f, x in force.items()}
    wrench = {f: x[sel] for f, x in wrench.items()}
    ankle = {f: x[sel] for f, x in ankle.items()}
    kept = np.flatnonzero(keep)[sel]
    imu_q = imu_q[sel] if imu_q is not None else None
    # contact states: the rule of legid_ros.core.contact on the world-vertical forces, at the
    # full rate (as the buffer sees them), then at the kept samples
    if src == 'true':
        fz_all = np.column_stack([force_full[f][:, 2] for f in feet]) \
            if len(force_full) == len(feet) else np.full((t_all.size, len(feet)), np.nan)
    else:
        up = None
        if src == 'wrench' and o.use_imu:
            # the vertical axis at the kept samples, held over the samples between them
            near = np.clip(np.searchsorted(sel, np.arange(t_all.size)), 0, sel.size - 1)
            up = {f: x[near] for f, x in up_axes(robot, q_f, imu_q).items()}
        fz_all = normal_forces(robot, src, force_full, up)
    total_fz = np.nansum(fz_all[sel], axis=1) if fz_all.size else np.full(t.size, np.nan)
    if o.support == 'auto':
        th = ContactThresholds.for_robot(robot, o.contact_on_fraction, o.contact_off_fraction)
        loaded = contact_states(fz_all, th)[sel]
        double = loaded.sum(axis=1) > 1
        # the most loaded foot: the one most surely flat and still
        first = np.argmax(np.where(loaded, fz_all[sel], -np.inf), axis=1)
        support = np.array([feet[i] for i in first], dtype=object)
        none = ~loaded.any(axis=1)
        # the ground pushes only on a foot in contact: a foot the rule has in the air gets a
        # zero wrench (a light robot's sensor offset or cable drag is no ground force)
        wrench = {f: np.where(loaded[:, [feet.index(f)]], w, 0.0) if f in feet else w
                  for f, w in wrench.items()}
    else:
        if o.support not in feet:
            raise BadInputError(f'support foot {o.support!r} is not a foot: {feet}')
        support = np.array([o.support] * t.size, dtype=object)
        double = np.zeros(t.size, bool)
        none = np.zeros(t.size, bool)
        loaded = np.tile(np.array([f == o.support for f in feet]), (t.size, 1))
    # the frames the measured ZMP needs, placed by the base-state pass (no second one)
    frames = sorted({i for ids in cop_frames(robot, feet, src).values() for i in ids}) \
        if src != 'true' else []
    placements = None
    if o.base not in BASES + ('true',):
        raise BadInputError(f"base must be 'auto', 'support', 'contacts' or 'true', not "
                            f'{o.base!r}')
    # one count of the contacts decides the base and the margin, and gives the margin's mask
    tally = ContactTally(o.transition_s)
    near = tally.add(t, loaded)
    choice = tally.choice(robot, 'auto' if o.base == 'true' else o.base, o.use_imu)
    near = near[tally.margins.index(choice.transition_s)] if near is not None \
        else np.zeros(t.size, bool)
    if o.base == 'true':
        if rec.base_pose_true is None:
            raise BadInputError('recording has no true base state')
        q = np.hstack([rec.base_pose_true[kept], q_f])
        v = np.hstack([rec.base_vel_true[kept], qd])
        a = np.hstack([rec.base_acc_true[kept], qdd])
    elif choice.base == 'contacts':
        # the base from every stance contact and the IMU's orientation (and rates)
        if not o.use_imu:
            raise BadInputError("base 'contacts' (and point feet) need the IMU (use_imu=True)")
        gyro = rec.imu_gyro[keep]
        cut = o.gyro_cutoff_hz or (0.5 * o.cutoff_hz if o.cutoff_hz else None)
        g = signals.butter_zero_phase(gyro, cut, rate) if cut and cut < 0.45 * rate else gyro
        gyro, gyro_dot, _ = signals.derivatives(t_all, g, 'savgol' if o.diff != 'fd'
                                                else 'fd', o.window_s, at=sel)
        st = stance_base_state(robot, q_f, qd, qdd, loaded & ~none[:, None],
                               imu_q, gyro, gyro_dot, rates_from_imu=True,
                               frames=frames)
        q, v, a = st['q'], st['v'], st['a']
        placements = st.get('placements')
        q[none], v[none], a[none] = q[~none][:1], v[~none][:1], a[~none][:1]
    else:
        stance = np.stack([support == f for f in feet], axis=1) & ~none[:, None]
        st = stance_base_state(robot, q_f, qd, qdd, stance,
                               imu_q,
                               orientation='imu_tilt' if o.use_imu else 'sole', frames=frames)
        q, v, a = st['q'], st['v'], st['a']
        placements = st.get('placements')
    if imu_acc:  # filtered like the forces, at the full rate
        acc = np.asarray(rec.imu_acc, float)[keep]
        acc = signals.butter_zero_phase(acc, o.cutoff_hz, rate) if filtered else acc
        a[:, :3] = imu_linear_acceleration(robot, q, v, a, acc[sel])
    zmp, fz = _measured_zmp(robot, q, src, force, rec, kept, loaded, placements)
    if src == 'true' and np.all(np.isfinite(total_fz)) and np.any(total_fz > 0):
        fz = total_fz  # the true ZMP with the measured vertical force (not the CAD weight)
    if o.lag is not None:
        zmp = signals.lag_filter(zmp, o.lag)
    good = np.isfinite(zmp).all(axis=1) & ~none
    if np.sum(~good):
        dropped['no contact / unloaded'] = int(np.sum(~good))
    good &= _contact_filter(t, loaded, double, none, o, dropped, choice.transition_s, near)
    idx = np.flatnonzero(good)
    zt = rec.zmp_true[kept][idx] if rec.zmp_true is not None else None
    return Samples(t[idx], q[idx], v[idx], a[idx], zmp[idx], fz[idx], tau[idx],
                   {f: w[idx] for f, w in wrench.items()}, support[idx], double[idx], dropped,
                   zt, {f: w[idx] for f, w in ankle.items()}, choice)


def _contact_filter(t, loaded, double, none, o: PrepareOptions, dropped: dict,
                    transition_s: float, near: np.ndarray) -> np.ndarray:
    """Samples kept by ``single_support_only``, ``min_contacts`` and the margin
    ``transition_s`` [s] around contact changes (``near``: the samples within it; counted in
    ``dropped``)."""
    keep = np.ones(t.size, bool)
    if o.single_support_only:
        keep &= ~double
        if np.sum(double & ~none):
            dropped['double support'] = int(np.sum(double & ~none))
    if o.min_contacts > 0:
        few = (loaded.sum(axis=1) < o.min_contacts) & keep & ~none
        if few.any():
            dropped[f'fewer than {o.min_contacts} feet in contact'] = int(few.sum())
        keep &= ~few
    if transition_s > 0 and t.size > 1:
        near = near & keep & ~none
        if near.any():
            dropped[f'contact change within {transition_s:g} s'] = int(near.sum())
        keep &= ~near
    return keep


def _measured_zmp(robot, q, src, force, rec, kept, loaded, placements=None):
    """Measured ZMP [m] and vertical force [N] (:func:`measured_cop`; 'true': the recording's)."""
    if src == 'true':
        return rec.zmp_true[kept], np.full(q.shape[0], robot.total_mass * 9.81)
    return measured_cop(robot, src, force, loaded, placements, q)
