"""The biped cases of ``legid bench peers``: recordings, our side, FIGAROH's fixed-foot model.

Recordings: Wu & Gao 2021's single-support experiment in MuJoCo
(:func:`legid_ros.core.sim.mujoco_biped.simulate_biped_mujoco`: joint friction, servo
compliance, soft contacts, sensor noise) with the out-of-model truth of
:mod:`legid_ros.core.synthetic.truth` (per-link mass, 3-D COM and inertia changes, payloads).
The robot stands on its right foot throughout, so the joint torques are those of a fixed-base
tree rooted at that foot: ours builds those rows from the floating-base model
(:mod:`legid_ros.core.identification.rows.regressors`, ``torque_ls``), FIGAROH gets the URDF
re-rooted at ``r_foot`` (:mod:`legid_ros.bench.peers_urdf`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np
import pinocchio as pin

from legid_ros.bench.peers_urdf import reroot_urdf
from legid_ros.core.identification import identify
from legid_ros.core.identification.prepare import PrepareOptions, prepare
from legid_ros.core.identification.rows.linear import build_rows
from legid_ros.core.recording import Recording
from legid_ros.core.robot import Robot
from legid_ros.core.urdf_io import write_urdf

SUPPORT_LINK = 'r_foot'
# Why FIGAROH cannot take the floating-base case with foot wrenches (checked on figaroh 1.0.2)
FLOATING_UNSUPPORTED = (
    "FIGAROH 1.0.2's identification workflow (BaseIdentification) fills one configuration "
    "index per active joint (act_idxq) and scores effort rows per active joint (act_idxv), so "
    "a free-flyer's 7-coordinate pose cannot enter it; its external-wrench regressor "
    "(build_regressor_basic with is_external_wrench) exists only as a low-level function "
    "(its 0.x human example drove it from a script), and assembling base pose, wrench "
    "transport and solve around it would be re-implementing the workflow, not using it")


@dataclass
class BipedRecordings:
    """Training and held-out MuJoCo runs.

    Attributes:
        train, heldout: The recordings. sim_s: Simulation wall time [s].
    """

    train: Recording
    heldout: Recording
    sim_s: float


def record(robot: Robot, train_s: float, heldout_s: float, seed: int,
           rate_hz: float) -> BipedRecordings:
    """Two MuJoCo runs of the single-support experiment (different random motions)."""
    from legid_ros.core.sim.mujoco_biped import PhysicsConfig, simulate_biped_mujoco
    from legid_ros.core.synthetic import SyntheticConfig
    from legid_ros.core.synthetic.truth import truth_table

    t0 = time.perf_counter()
    runs = [simulate_biped_mujoco(SyntheticConfig(duration_s=d, rate_hz=rate_hz, seed=s,
                                                  truth=truth_table('out_of_model')),
                                  PhysicsConfig(), robot=robot, progress=False)
            for d, s in ((train_s, seed), (heldout_s, seed + 1000))]
    return BipedRecordings(runs[0], runs[1], time.perf_counter() - t0)


def _single_support(smp) -> np.ndarray:
    return ~smp.double_support & np.isfinite(smp.tau).all(axis=1)


def heldout_index(robot: Robot, rec: Recording, options: PrepareOptions) -> np.ndarray:
    """Recording indices of the held-out samples our rows use (both tools are scored on them)."""
    smp = prepare(rec, robot, options)
    return np.searchsorted(rec.t, smp.t[_single_support(smp)] - 1e-9)


def run_ours(robot: Robot, rec: BipedRecordings, options: PrepareOptions) -> Dict[str, dict]:
    """Joint-torque rows with the support foot as the fixed base, friction, two solvers.

    ``sdp``: pseudo-inertia LMIs (physically consistent); ``torque_ls``: WLS with the
    standard-set QP. Wall time of each: preparation of the recording + identification.
    Returns per method: held-out predictions, the torque-weighted rigid-parameter error on the
    training rows, consistency, time.
    """
    t0, c0 = time.perf_counter(), time.process_time()
    smp = prepare(rec.train, robot, options)
    prep_s, prep_cpu = time.perf_counter() - t0, time.process_time() - c0
    smp_h = prepare(rec.heldout, robot, options)
    rows_h = build_rows(smp_h, robot, 'torque', friction=True)
    a = build_rows(smp, robot, 'torque', friction=False).A
    pi_true = np.asarray(rec.train.pi_true, float)
    nj = robot.model.nv - 6
    out = {}
    for name, method, opts in (('sdp', 'sdp', {'rows': 'torque'}), ('torque_ls', 'torque_ls', {})):
        t0, c0 = time.perf_counter(), time.process_time()
        res = identify(rec.train, robot, method, samples=smp, **opts)
        wall = prep_s + time.perf_counter() - t0
        cpu = prep_cpu + time.process_time() - c0
        x = np.r_[res.pi, res.friction]
        err = float(np.linalg.norm(a @ (res.pi - pi_true)) / np.linalg.norm(a @ pi_true))
        out[name] = {'result': res, 'wall_s': wall, 'cpu_s': cpu,
                     'tau_heldout': (rows_h.A @ x).reshape(-1, nj),
                     'consistent': bool(res.consistency.ok), 'param_err_pct': 100 * err,
                     'consistency_failing': list(res.consistency.failing)}
    return out


def fixed_foot_urdfs(robot: Robot, pi_true: np.ndarray, workdir: Path) -> Tuple[Path, Path]:
    """The CAD URDF re-rooted at the support foot (FIGAROH's model), and the truth's."""
    cad = workdir / 'biped_fixed_foot.urdf'
    cad.write_text(reroot_urdf(Path(robot.urdf_path).read_text(), SUPPORT_LINK))
    truth_src = write_urdf(robot.urdf_path, robot.model, pi_true, workdir / 'biped_truth.urdf')
    truth = workdir / 'biped_truth_fixed_foot.urdf'
    truth.write_text(reroot_urdf(truth_src.read_text(), SUPPORT_LINK))
    return cad, truth


def figaroh_truth(truth_urdf: Path) -> Dict[str, float]:
    """True standard parameters of the re-rooted model in FIGAROH's naming."""
    from figaroh.identification.parameter import get_standard_parameters

    return dict(get_standard_parameters(pin.buildModelFromUrdf(str(truth_urdf))))


def joints_of(robot: Robot) -> List[str]:
    """Actuated joints in the recordings' column order."""
    return list(robot.actuated_joint_names)
