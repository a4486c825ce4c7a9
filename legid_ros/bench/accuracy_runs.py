"""Physics runs and data preparation of ``legid bench accuracy``, and its validator.

- :func:`simulate_runs`: MuJoCo runs of the biped (cached as .npz on request).
- :func:`prep_options`: how every method's samples are prepared (single support only with the
  swap protocol).
- :class:`Validator`: model ZMP of a parameter set against the measured ZMP of the validation
  run.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import List

import numpy as np

from legid_ros.core.recording import Recording
from legid_ros.core.robot import Robot


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def simulate_runs(robot: Robot, seeds: List[int], duration_s: float, rate_hz: float,
                  cache: str = None, swing_tilt_rad: float = 0.0,
                  truth_class: str = 'table2', protocol: str = 'right') -> tuple:
    """MuJoCo runs of Wu & Gao's experiment; returns (recordings, wall times [s]).

    ``truth_class``: the true inertials (:mod:`legid_ros.core.synthetic.truth`);
    ``protocol``: 'right' (single support on the right foot) or 'swap' (right, a
    double-support transfer, left: both feet swing and are weighed by their ankle F/T).
    """
    from legid_ros.core.sim.mujoco_biped import PhysicsConfig, simulate_biped_mujoco
    from legid_ros.core.synthetic import SyntheticConfig
    from legid_ros.core.synthetic.truth import truth_table

    recs, walls = [], []
    for seed in seeds:
        path = None
        if cache:
            Path(cache).mkdir(parents=True, exist_ok=True)
            tilt = f'_tilt{swing_tilt_rad:g}' if swing_tilt_rad else ''
            tilt += '' if truth_class == 'table2' else f'_{truth_class}'
            tilt += '' if protocol == 'right' else f'_{protocol}'
            path = Path(cache) / f'mujoco_seed{seed}_{duration_s:g}s_{rate_hz:g}hz{tilt}.npz'
            if path.is_file():
                recs.append(Recording.load_npz(path))
                walls.append(float('nan'))
                _log(f'physics run seed {seed}: loaded {path}')
                continue
        start = time.perf_counter()
        rec = simulate_biped_mujoco(SyntheticConfig(duration_s=duration_s, rate_hz=rate_hz,
                                                    seed=seed, truth=truth_table(truth_class),
                                                    protocol=protocol),
                                    PhysicsConfig(swing_tilt_rad=swing_tilt_rad), robot=robot)
        walls.append(time.perf_counter() - start)
        _log(f'physics run seed {seed}: {duration_s:g} s simulated in {walls[-1]:.1f} s, '
             f'fell: {rec.meta["fell"]}')
        if path is not None:
            rec.save_npz(path)
        recs.append(rec)
    return recs, walls


#: Swap protocol: ZMP rows from single support only, away from touch-down and lift-off [s]
TRANSITION_S = 0.5


def prep_options(step: int, protocol: str):
    """Data preparation of every method: single-support samples only with the swap protocol.

    In MuJoCo the model ZMP of a double-support sample is 1.5-12 mm off the measured one
    (soft contacts of two feet, load transfer) against 0.33 mm in single support: left in,
    the few hundred transfer samples would outweigh the rest of the run.
    """
    from legid_ros.core.identification.prepare import PrepareOptions
    swap = protocol == 'swap'
    return PrepareOptions(step=step, single_support_only=swap,
                          transition_s=TRANSITION_S if swap else 0.0)


class Validator:
    """Model ZMP of a parameter set on the validation run versus the measured ZMP."""

    def __init__(self, robot: Robot, rec: Recording, step: int = 1, protocol: str = 'right',
                 options=None):
        """``options``: :class:`PrepareOptions` (default: :func:`prep_options` of the run)."""
        from legid_ros.core.identification.prepare import prepare
        from legid_ros.core.identification.rows.regressors import compute_regressors

        self.samples = prepare(rec, robot, options or prep_options(step, protocol))
        s = self.samples
        self.wrench = compute_regressors(robot, s.q, s.v, s.a).wrench

    def deviation(self, pi: np.ndarray):
        """Model vs measured ZMP (:class:`legid_ros.core.metrics.ZmpDeviation`, [mm])."""
        from legid_ros.core.metrics import zmp_deviation
        from legid_ros.core.identification.rows.zmp import model_zmp

        return zmp_deviation(model_zmp(self.wrench, pi)[0], self.samples.zmp)
