"""FIGAROH's optimal excitation design on the fixed-base leg ``leg3``, beside ours.

FIGAROH (figaroh 1.0.2) designs an exciting trajectory with
:class:`figaroh.optimal.base_optimal_trajectory.BaseOptimalTrajectory`, driven as its robot
examples do (an empty subclass naming its IPOPT problem,
:class:`~figaroh.optimal.base_optimal_trajectory.BaseTrajectoryIPOPTProblem`): the free
variables are the positions of ``waypoints - 1`` waypoints (the first one is drawn at random),
joined by cubic splines at rest at every waypoint (``segment_duration`` apart), sampled at
``frequency``; IPOPT (cyipopt, finite-difference gradients) minimises the condition number of
FIGAROH's own base regressor (rigid body, friction ``fv qd + fs sign(qd)``, actuator inertia
``Ia qdd``, unscaled) under position limits at the waypoints and velocity and torque limits at
every sample. Its unified config is the one :func:`legid_ros.bench.peers_figaroh.write_config`
writes for ``legid bench peers``, plus its ``optimal_trajectory`` task.

Same settings as ours where FIGAROH's API allows: its limits are read from the loaded model, so
the model gets ours (the URDF's position limits shrunk by the same margin, the description's
speed limits) and ``soft_lim`` is 0; the duration is one excitation period (5 s: 4 segments of
1.25 s). What differs: FIGAROH has no acceleration limit (ours: ``qdd_max_rad_s2``), it bounds
CAD torques by the URDF's efforts (ours: no torque bound), its start is a random waypoint
(ours: the middle of the range), and leg3 has no collision geometry so its collision
constraint is empty.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Optional

import numpy as np
import yaml

from legid_ros.core.identification.excitation_trajectory import FourierExcitation
from legid_ros.core.robot import Robot

# FIGAROH's optimal_trajectory task: 5 waypoints 1.25 s apart (one 5 s period), 100 Hz samples
TRAJECTORY = {'waypoints': 5, 'frequency': 100, 'segment_duration': 1.25}
# FIGAROH's problem settings; segment_attempts: its own retry from a new random start when
# IPOPT fails on its non-smooth objective (1 by default). With 3, the third start was accepted
# on one machine and none of the three on another (IPOPT's path differs with the machine's
# floating point: statuses -3, -2, -3 there, then -1, accepted, on the fourth start): 6
PROBLEM = {'soft_lim': 0.0, 'max_attempts': 1000, 'max_iterations': 200, 'segment_attempts': 6}


@dataclass
class FigarohDesign:
    """FIGAROH's designed excitation of the active joints.

    Attributes:
        status: 'ok' or 'failed' (with ``reason``, FIGAROH's own error text).
        design_s: Wall time of FIGAROH's design (``solve``) [s]; its setup (loading the robot,
            base indices from a random trajectory) is ``info['setup_s']``.
        t: Times [s], (N,). q, qd, qdd: Positions [rad], speeds [rad/s], accelerations
            [rad/s^2] of the active joints, (N, nj).
        info: Solver facts (IPOPT status, iterations, FIGAROH's final objective).
        objective: FIGAROH's objective (condition number of its unscaled base regressor) on
            samples ``(q, qd, qdd)`` of the active joints.
    """

    status: str
    reason: str = ''
    design_s: float = float('nan')
    t: Optional[np.ndarray] = None
    q: Optional[np.ndarray] = None
    qd: Optional[np.ndarray] = None
    qdd: Optional[np.ndarray] = None
    info: Dict[str, object] = field(default_factory=dict)
    objective: Optional[Callable[..., float]] = field(default=None, repr=False)


def write_config(path: Path, robot: Robot, urdf: Path, problem: dict) -> Path:
    """FIGAROH's unified config: the identification task of ``legid bench peers`` (friction and
    actuator inertia, no joint offset) and the ``optimal_trajectory`` task."""
    from legid_ros.bench.peers_figaroh import FigarohSettings
    from legid_ros.bench.peers_figaroh import write_config as identification_config
    from legid_ros.core.synthetic.leg_experiment import ident_settings
    cfg = ident_settings(robot)
    settings = FigarohSettings(urdf=urdf, joints=list(robot.actuated_joint_names),
                               rate_hz=float(TRAJECTORY['frequency']),
                               cutoff_hz=float(cfg.get('filter_cutoff_hz', 7.5)))
    identification_config(path, robot.name, settings, 'ls_no_offset')
    unified = yaml.safe_load(path.read_text())
    unified['tasks']['optimal_trajectory'] = {
        'enabled': True, 'problem': dict(problem),
        'trajectory': dict(TRAJECTORY)}
    path.write_text(yaml.safe_dump(unified, sort_keys=False))
    return path


def model_limits(lim, soft_lim: float):
    """Model limits whose shrinking by FIGAROH's ``soft_lim`` gives our limits.

    FIGAROH's :class:`~figaroh.utils.cubic_spline.CubicSpline` takes ``U - s (U - L)`` as upper
    and then ``L + s (U' - L)`` (with that new upper ``U'``) as lower position bound, and
    ``V (1 - 2 s)`` as speed bound (its lower speed bound comes out ``2 s^2 V`` looser).

    Args:
        lim: Our :class:`ExcitationLimits`. soft_lim: FIGAROH's ``soft_lim`` ``s`` [-].

    Returns:
        ``(lower, upper, speed)`` model limits [rad], [rad], [rad/s].
    """
    s = float(soft_lim)
    low = (lim.q_low - s * lim.q_high) / (1 - s)
    high = (lim.q_high - s * low) / (1 - s)
    return low, high, lim.qd_max / (1 - 2 * s)


def _optimal_trajectory_class():
    """FIGAROH's design class with its base IPOPT problem (imported only when run)."""
    from figaroh.optimal.base_optimal_trajectory import (BaseOptimalTrajectory,
                                                         BaseTrajectoryIPOPTProblem)

    class LegOptimalTrajectory(BaseOptimalTrajectory):
        """FIGAROH's design with its base IPOPT problem, as in its robot examples."""

        def __init__(self, *args):
            super().__init__(*args)
            self.attempts = []  # IPOPT's outcome of every segment attempt

        def create_ipopt_problem(self, *args):
            return LegIPOPTProblem(self, *args, 'leg3_excitation')

    class LegIPOPTProblem(BaseTrajectoryIPOPTProblem):
        """FIGAROH's base problem; records IPOPT's status of each solve."""

        def solve_with_waypoints(self, wps):
            ok, res = super().solve_with_waypoints(wps)
            self.opt_traj.attempts.append(
                {'accepted': bool(ok), 'status': res.get('status'),
                 'status_msg': _text(res.get('status_msg', res.get('error', ''))),
                 'iterations': len(self.iteration_data['iterations']),
                 'objective': res.get('obj_val')})
            return ok, res

    return LegOptimalTrajectory


def _text(msg) -> str:
    return msg.decode() if isinstance(msg, bytes) else str(msg)


@contextlib.contextmanager
def _quiet_fd():
    """IPOPT prints from C on file descriptor 1: send it (and Python's stdout) to /dev/null."""
    sys.stdout.flush()
    saved = os.dup(1)
    with open(os.devnull, 'w') as null:
        os.dup2(null.fileno(), 1)
        try:
            with contextlib.redirect_stdout(null):
                yield
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)


def design(robot: Robot, seed: int = 0, max_iterations: int = PROBLEM['max_iterations'],
           problem: Optional[dict] = None, workdir: Optional[Path] = None) -> FigarohDesign:
    """Run FIGAROH's optimal excitation design on ``robot`` (a fixed-base leg) under our limits.

    Args:
        robot: The leg (``load_robot('leg3', floating_base=False)``).
        seed: Seed of numpy's global generator, which FIGAROH's random waypoints use.
        max_iterations: IPOPT iterations (FIGAROH's ``max_iterations``, default 200).
        problem: Other entries of FIGAROH's ``problem`` settings over :data:`PROBLEM`.
        workdir: Where the config goes (default: a temporary directory).

    Returns:
        The designed trajectory, or ``status='failed'`` with FIGAROH's error.
    """
    import warnings

    from figaroh.tools.robot import load_robot

    from legid_ros.bench.peers_figaroh import _quiet
    from legid_ros.core.synthetic.leg_experiment import leg_limits
    problem = {**PROBLEM, **(problem or {}), 'max_iterations': int(max_iterations)}
    with tempfile.TemporaryDirectory(prefix='legid_figaroh_design_') as tmp:
        path = write_config(Path(workdir or tmp) / 'leg3_optimal_trajectory.yaml', robot,
                            Path(robot.urdf_path), problem)
        lim = leg_limits(robot)
        joints = list(robot.actuated_joint_names)
        state = np.random.get_state()
        np.random.seed(seed)
        try:
            with _quiet(('cyipopt', '')), _quiet_fd(), warnings.catch_warnings():
                warnings.simplefilter('ignore')
                t0 = time.perf_counter()
                frob = load_robot(str(robot.urdf_path),
                                  package_dirs=str(Path(robot.urdf_path).parent))
                ids = [frob.model.joints[frob.model.getJointId(j)] for j in joints]
                iq, iv = [j.idx_q for j in ids], [j.idx_v for j in ids]
                low, high, speed = model_limits(lim, problem['soft_lim'])
                frob.model.lowerPositionLimit[iq] = low
                frob.model.upperPositionLimit[iq] = high
                frob.model.velocityLimit[iv] = speed
                opt = _optimal_trajectory_class()(frob, joints, str(path))
                opt.identif_config.update({  # as FIGAROH's examples set them
                    'active_joints': joints, 'act_Jid': [j.id for j in ids], 'act_J': ids,
                    'act_idxq': iq, 'act_idxv': iv})
                opt.initialize()
                t1 = time.perf_counter()
                res = opt.solve(stack_reps=1)
                design_s = time.perf_counter() - t1
        except Exception as exc:  # FIGAROH's own failure, reported as is
            return FigarohDesign('failed', f"FIGAROH's design raised {type(exc).__name__}: {exc}")
        finally:
            np.random.set_state(state)
    if not res['T_F']:
        return FigarohDesign('failed', "FIGAROH's design returned no trajectory: its IPOPT "
                             f'attempts {opt.attempts}', design_s,
                             info={'setup_s': t1 - t0, 'attempts': opt.attempts})
    it = res['iteration_data'][-1]
    info = {'ipopt_status': int(it['status']), 'converged': bool(it['converged']),
            'iterations': int(len(it['iterations'])),
            'objective': opt.attempts[-1]['objective'],  # IPOPT's value at its returned point
            'n_base_figaroh': int(len(opt.idx_b)), 'setup_s': t1 - t0, 'attempts': opt.attempts}

    def objective(q, qd, qdd) -> float:
        full = [np.zeros((len(q), n)) for n in (frob.model.nq, frob.model.nv, frob.model.nv)]
        for arr, idx, x in zip(full, (iq, iv, iv), (q, qd, qdd)):
            arr[:, idx] = x
        return float(np.linalg.cond(opt._stack_base_regressors(*full)))

    return FigarohDesign('ok', design_s=design_s, t=np.asarray(res['T_F'][0], float).ravel(),
                         q=np.asarray(res['P_F'][0])[:, iq], qd=np.asarray(res['V_F'][0])[:, iv],
                         qdd=np.asarray(res['A_F'][0])[:, iv], info=info, objective=objective)


def limit_use(limits, q, qd, qdd) -> dict:
    """How a trajectory uses our limits: largest position excess beyond them [rad] (> 0:
    outside), largest speed and acceleration as fractions of their limits [-]."""
    excess = np.maximum(limits.q_low - q, q - limits.q_high)
    return {'q_excess_rad': float(excess.max()),
            'qd_over_max': float((np.abs(qd) / limits.qd_max).max()),
            'qdd_over_max': float((np.abs(qdd) / limits.qdd_max).max())}


def side_by_side(ctx, ours: FourierExcitation, ours_s: float, fig: FigarohDesign) -> dict:
    """Both designs on the same samples and the same regressor.

    Both trajectories are sampled at FIGAROH's 100 Hz over one period and scored by our
    scaled base regressor with Coulomb-viscous columns
    (:func:`~legid_ros.core.synthetic.leg_experiment.scaled_leg_regressor`, the function our
    design minimises): its condition number (``cond_*``) and the log-determinant of the
    information per sample ``A^T A / N`` (``logdet_*``); FIGAROH's own objective (its unscaled
    base regressor's condition number) on both too.

    Args:
        ctx: The leg. ours: Our designed excitation. ours_s: Our design time [s].
        fig: FIGAROH's design (or its failure).

    Returns:
        The ``fixed_base_leg`` figures (``cond_ratio_vs_figaroh``: ours / FIGAROH's).
    """
    from legid_ros.core.identification.solvers.least_squares import cond_ne
    from legid_ros.core.synthetic.leg_experiment import leg_limits, scaled_leg_regressor
    n = int(round(ours.period * TRAJECTORY['frequency'])) + 1
    t = fig.t if fig.status == 'ok' else np.linspace(0.0, ours.period, n)
    runs = {'ours': ours.evaluate(t)}
    if fig.status == 'ok':
        runs['figaroh'] = (fig.q, fig.qd, fig.qdd)
    lim = leg_limits(ctx.robot)
    out: Dict[str, object] = {'robot': ctx.robot.name, 'samples': int(len(t)),
                              'design_s_ours': float(ours_s), 'design_s_figaroh': None,
                              'cond_figaroh': None, 'logdet_figaroh': None,
                              'cond_ratio_vs_figaroh': None}
    for name, (q, qd, qdd) in runs.items():
        a = scaled_leg_regressor(ctx, q, qd, qdd)
        out[f'cond_{name}'] = cond_ne(a)
        out[f'logdet_{name}'] = float(np.linalg.slogdet(a.T @ a / len(t))[1])
        out[f'qdd_abs_max_{name}'] = np.abs(qdd).max(axis=0).tolist()
        out[f'qd_abs_max_{name}'] = np.abs(qd).max(axis=0).tolist()
        out[f'limit_use_{name}'] = limit_use(lim, q, qd, qdd)
        if fig.objective is not None:
            out[f'figaroh_objective_{name}'] = fig.objective(q, qd, qdd)
    if math.isfinite(fig.design_s):
        out['design_s_figaroh'] = float(fig.design_s)
    if fig.info:
        out['figaroh_solver'] = dict(fig.info)
    if fig.status == 'ok':
        out['cond_ratio_vs_figaroh'] = out['cond_ours'] / out['cond_figaroh']
    else:
        out['figaroh_not_run'] = fig.reason
    return out


def settings(robot: Robot, max_iterations: int = PROBLEM['max_iterations']) -> dict:
    """Both designs' settings and what differs, for the JSON."""
    from legid_ros.core.synthetic.leg_experiment import ident_settings, leg_limits
    lim = leg_limits(robot)
    cfg = ident_settings(robot)
    return {
        'score': 'our scaled base regressor + Coulomb-viscous columns (scaled_leg_regressor, '
                 'what leg_cond_function uses) on both trajectories sampled at 100 Hz over one '
                 'period; logdet = log det(A^T A / N), N samples',
        'limits': {'q_low_rad': lim.q_low.tolist(), 'q_high_rad': lim.q_high.tolist(),
                   'qd_max_rad_s': lim.qd_max.tolist(), 'qdd_max_rad_s2': lim.qdd_max.tolist()},
        'period_s': float(cfg.get('excitation_period_s', 5.0)),
        'ours': 'design_excitation: 5-harmonic Fourier + quintic, centred, SLSQP minimising '
                'log cond of the scaled regressor, 2 random starts x 300 iterations, position '
                '/ speed / acceleration limits on a 200-point grid',
        'figaroh': {'trajectory': dict(TRAJECTORY),
                    'problem': {**PROBLEM, 'max_iterations': int(max_iterations)},
                    'design': 'BaseOptimalTrajectory.solve(stack_reps=1): cubic splines at '
                              'rest at each waypoint, first waypoint random, IPOPT on the '
                              'other waypoints minimising cond of its unscaled base regressor '
                              '(friction fv/fs, actuator inertia Ia), position limits at the '
                              'waypoints, speed and URDF torque limits at every sample'},
        'differences': 'FIGAROH has no acceleration limit and bounds CAD torques by the URDF '
                       'efforts (ours: acceleration limits, no torque bound); its first '
                       'waypoint is random (ours: centred); its objective is unscaled; leg3 has '
                       'no collision geometry, so its collision constraint is empty'}
