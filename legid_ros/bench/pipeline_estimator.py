"""Estimator part of ``legid bench pipeline``: update time against the length of the history.

The estimator node's path without ROS: a synthetic run goes through the buffer
(:class:`legid_ros.core.buffer.sensor_buffer.Buffer`) into windows, the windows into
:class:`legid_ros.core.identification.online.OnlineEstimator`. The 20 s run is replayed lap after
lap (stamps shifted) to build up the history, folding every ``fill_step``-th row as the node does
by default (``fold_rate_hz`` 100: every 10th row of its 1 kHz). At 10 s and at
``max_history_s`` the cost of one estimator cycle (fold one window as the node does + solve) is
measured ``repeats`` times, interleaved between the two saved states (so machine load and the
solver's warm start affect both alike).
"""

from __future__ import annotations

import time
from typing import Dict, List

import numpy as np

from legid_ros.core import signals
from legid_ros.core.buffer.window import WindowData
from legid_ros.core.pipeline.replay import recording_windows
from legid_ros.core.identification.online import OnlineEstimator
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import SyntheticConfig, simulate_biped


def _windows(duration_s: float, seed: int) -> List[WindowData]:
    rec = simulate_biped(SyntheticConfig(duration_s=duration_s, seed=seed))
    robot = load_robot('biped')
    return list(recording_windows(rec, robot, 'wrench', ankle_ft=False))


def _fold(est: OnlineEstimator, w: WindowData, offset: float, step: int) -> int:
    idx = np.arange(50, 150)[::step] if w.n >= 150 else np.arange(w.n)[::step]
    _, qd, qdd = signals.savgol_derivatives(w.t, w.q, 0.05)
    return est.add_window(w.t[idx] + offset, w.q[idx], qd[idx], qdd[idx],
                          zmp=w.zmp_support[idx], fz=np.where(w.ok, w.fz, np.nan)[idx],
                          imu_quat=w.imu_quat[idx], support=w.support[idx])


def update_times(max_history_s: float = 600.0, fill_step: int = 10, repeats: int = 10,
                 run_s: float = 20.0) -> Dict[str, object]:
    """Median estimator cycle time [ms] at 10 s and at ``max_history_s`` of history."""
    robot = load_robot('biped')
    wins = _windows(run_s, seed=1)
    span = wins[-1].t[-1] - wins[0].t[0] + 1.0
    est = OnlineEstimator(robot, method='zmp', min_samples=100)
    history = 0.0
    lap = 0
    states = {}
    k = 0
    for mark in (10.0, max_history_s):
        while history < mark:
            _fold(est, wins[k % len(wins)], lap * span, fill_step)
            history += 0.1  # one hop of 100 rows at 1 kHz
            k += 1
            if k % len(wins) == 0:
                lap += 1
        states[mark] = {key: np.copy(v) for key, v in est.state_dict().items()}
    # Interleaved: each cycle starts from the saved state of its history length, with the QP
    # built and warm (one untimed update), then folds one new window and solves, as the node
    # does every update period. Machine load hits both lengths alike.
    times = {mark: ([], []) for mark in states}
    info = {}
    for r in range(repeats):
        w = wins[(k + r) % len(wins)]
        for mark, state in states.items():
            est.load_state_dict(state)
            est.update()
            t0 = time.perf_counter()
            _fold(est, w, (lap + 1) * span, fill_step)
            t1 = time.perf_counter()
            res = est.update()
            t2 = time.perf_counter()
            times[mark][0].append(t2 - t0)
            times[mark][1].append(t2 - t1)
            info[mark] = (float(est.normal.n), float(res.residual_rms))
    results = {}
    for mark, (cycle, solve) in times.items():
        results[mark] = {
            'cycle_ms': 1000 * float(np.median(cycle)),
            'fold_ms': 1000 * float(np.median(np.array(cycle) - np.array(solve))),
            'solve_ms': 1000 * float(np.median(solve)),
            'samples_in_statistics': info[mark][0],
            'residual_rms_mm': 1000 * info[mark][1]}
    short, long_ = results[10.0], results[max_history_s]
    return {'history_s': [10.0, max_history_s], 'at_10s': short,
            f'at_{max_history_s:.0f}s': long_,
            'ratio': long_['cycle_ms'] / short['cycle_ms'],
            'solve_ratio': long_['solve_ms'] / short['solve_ms'],
            'fold_ratio': long_['fold_ms'] / short['fold_ms'],
            'fill_step': fill_step}
