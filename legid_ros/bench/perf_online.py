"""Online estimator update cost: the standard set with and without its consistency step, the
smaller sets, and the cost against the length of the history.

Used by ``legid bench perf`` and ``legid bench identify``. Times are the CPU time of the
calling thread (``time.thread_time``): the machine's other load does not count, only the work.
Every comparison is made interleaved, update for update, so drift hits both sides alike.
"""

from __future__ import annotations

import time
from typing import Callable, Dict, List, Sequence, Tuple

import numpy as np

from legid_ros.core.identification.online import OnlineEstimator
from legid_ros.core.identification.prepare import PrepareOptions, prepare
from legid_ros.core.synthetic import SyntheticConfig, simulate_biped

RATE_HZ = 100.0  # [Hz] identification rate of the timing run
WINDOW_S = 0.5  # [s] one window folded per update
PAIRED_UPDATES = 60  # updates per side of each interleaved comparison


def _cpu_ms(fn: Callable[[], object]) -> float:
    c0 = time.thread_time()
    fn()
    return 1e3 * (time.thread_time() - c0)


def _interleaved(ests: Dict[str, OnlineEstimator], windows: Dict[str, List[tuple]]
                 ) -> Tuple[Dict[str, np.ndarray], Dict[str, np.ndarray]]:
    """CPU time [ms] of each estimator's update, in turn, each after folding its next window;
    and the solver's share of each (wall time [ms] of its solve step)."""
    out: Dict[str, List[float]] = {k: [] for k in ests}
    solve: Dict[str, List[float]] = {k: [] for k in ests}
    for k in range(min(len(w) for w in windows.values())):
        for key, est in ests.items():
            est.add_window(*windows[key][k])
            res = []
            out[key].append(_cpu_ms(lambda: res.append(est.update())))
            solve[key].append(1e3 * float(res[0].info['qp_time_s']))
    return ({k: np.array(v) for k, v in out.items()},
            {k: np.array(v) for k, v in solve.items()})


def online_update_timing(duration: float, robot, progress,
                         other_sets: Sequence[str] = ('reduced', 'grouped')
                         ) -> Dict[str, object]:
    """Online update cost [ms CPU] along a synthetic run of ``duration`` s.

    The run (100 Hz, windows of 0.5 s) is folded window by window into the standard-set
    estimator with an update after each (its consistency step on: the pseudo-inertia LMIs).
    Then, interleaved, ``PAIRED_UPDATES`` more windows, each folded into every estimator and
    followed by one timed update: the estimator restored at 10 s of history (fed the windows
    that followed 10 s) against the one at the end (fed the windows after the end); the end one
    with and without its consistency step; and the other parameter sets on the same
    statistics. The standard deviations are recomputed every ``uncertainty_period_s`` of data,
    as in use: the mean carries their share. ``progress(total, desc)`` returns a tqdm-like
    bar.
    """
    from legid_ros.core.identification.threads import limit_blas_threads
    limit_blas_threads(1)  # as the estimator node runs (legid_ros.ros.executor.run_node)
    paired_s = PAIRED_UPDATES * WINDOW_S
    rec = simulate_biped(SyntheticConfig(duration_s=duration + paired_s, rate_hz=RATE_HZ,
                                         seed=77))
    s = prepare(rec, robot, PrepareOptions())
    est = OnlineEstimator(robot)
    others = {name: OnlineEstimator(robot, param_set=name) for name in other_sets}
    win = int(WINDOW_S * RATE_HZ)
    cpu, hist, by = [], [], []
    snapshot, after_10 = None, None
    windows = [(s.t[sl], s.q[sl, 7:], s.v[sl, 6:], s.a[sl, 6:], s.zmp[sl], s.fz[sl],
                rec.imu_quat[sl], 'right')
               for sl in (slice(k, k + win) for k in range(0, s.n - win + 1, win))]
    windows, paired = windows[:-PAIRED_UPDATES], windows[-PAIRED_UPDATES:]
    bar = progress(len(windows), 'online')
    for i, args in enumerate(windows):
        est.add_window(*args)
        for other in others.values():
            other.add_window(*args)
        bar.update(1)
        history = float(args[0][-1] - s.t[0])  # [s]
        if history < 5.0:
            continue
        if snapshot is None and history >= 10.0:
            snapshot = {key: np.array(v) for key, v in est.state_dict().items()}
            after_10 = windows[i + 1:i + 1 + PAIRED_UPDATES]
        c0 = time.thread_time()
        res = est.update()
        cpu.append(1e3 * (time.thread_time() - c0))
        hist.append(history)
        by.append(res.info['consistent_by'])
    bar.close()
    cpu, hist = np.array(cpu), np.array(hist)
    est_10 = OnlineEstimator(robot)
    est_10.load_state_dict(snapshot)
    est_10.update()
    plain = OnlineEstimator(robot)
    plain.load_state_dict(est.state_dict())
    plain.solver.consistency = False
    plain.update()
    ests = {'10': est_10, 'end': est, 'plain': plain, **others}
    for e in others.values():
        e.update()
    t, t_solve = _interleaved(ests, {k: after_10 if k == '10' else paired for k in ests})
    med = {k: float(np.median(v)) for k, v in t.items()}
    last = est.update()
    return {
        'online_update_ms_median': med['end'],
        'online_update_ms_p95': float(np.percentile(t['end'], 95)),
        'online_update_ms_mean': float(np.mean(t['end'])),
        'online_update_ms_in_run_median': float(np.median(cpu)),
        'online_update_ms_in_run_p95': float(np.percentile(cpu, 95)),
        'online_update_plain_ms_median': med['plain'],
        'online_update_lmi_over_plain': med['end'] / med['plain'],
        'online_update_ms_at_10s': med['10'],
        'online_update_ms_at_end': med['end'],
        'update_ratio_600s_vs_10s': med['end'] / med['10'],
        'online_update_ms_by_set': {name: med[name] for name in others},
        'online_solve_ms_by_set': {name: float(np.median(t_solve[name])) for name in others},
        'online_consistent_by_at_end': last.info['consistent_by'],
        'online_status_at_end': last.info['status'],
        'online_updates_needing_lmi_pct': float(100.0 * np.mean([b == 'lmi' for b in by])),
        'online_history_s': float(hist.max()), 'online_updates': int(cpu.size),
        'online_timing': 'CPU time of the calling thread [ms]; medians of '
                         f'{PAIRED_UPDATES} interleaved updates per side',
    }
