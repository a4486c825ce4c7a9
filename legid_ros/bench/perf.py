"""``legid bench perf``: the timing figures in one run of at most about 3 minutes.

Three parts, each a measurement shared with a full bench:

- **online update** (:mod:`legid_ros.bench.perf_online`, also in ``legid bench identify``): the
  standard set's update with its consistency step (pseudo-inertia LMIs) after 600 s of history,
  against the same update without it and against 10 s of history; the other sets reported;
- **batch identification** (:mod:`legid_ros.bench.perf_identify`): ``legid identify`` on a
  100 s, 1 kHz bag against reading the same bag's messages with the project's reader, and the
  identify process's peak memory against the bag's size;
- **buffer** (:mod:`legid_ros.bench.perf_buffer`, the harness of ``legid bench pipeline``): the
  buffer node's CPU share with the raw ankle F/T topics at 1 kHz.

Ratios are taken inside one run, so the machine's speed cancels; the figures' goals are in
:data:`GOALS` and ``passed`` says whether every one holds.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Dict

from legid_ros.core.robot import load_robot

# figure -> (goal, 'max' | 'min'): the targets
GOALS = {
    'online_update_ms_median': (2.0, 'max'),
    'online_update_lmi_over_plain': (2.0, 'max'),
    'update_ratio_600s_vs_10s': (1.2, 'max'),
    'identify_over_read_ratio_zmp_qp': (3.0, 'max'),
    'identify_over_read_ratio_zmp_newton': (3.0, 'max'),
    'identify_peak_rss_over_bag': (2.0, 'max'),
    'buffer_core_pct': (15.0, 'max'),
}


def add_arguments(parser) -> None:
    """Arguments of ``legid bench perf``."""
    parser.add_argument('--online-duration', type=float, default=600.0,
                        help='history of the online timing run [s] (default 600)')
    parser.add_argument('--bag-duration', type=float, default=100.0,
                        help='length of the identification bag [s] (default 100)')
    parser.add_argument('--identify-rounds', type=int, default=3,
                        help='rounds of read + identify runs; the figure is their median')
    parser.add_argument('--buffer-seconds', type=float, default=15.0,
                        help='length of each buffer run [s] (default 15)')
    parser.add_argument('--buffer-runs', type=int, default=3,
                        help='buffer runs; the figure is their median (default 3)')
    parser.add_argument('--workdir', default=None,
                        help='directory for the bag (kept and reused; default: a temporary one)')
    parser.add_argument('--skip', nargs='*', default=[],
                        choices=['online', 'identify', 'buffer'], help='parts to leave out')


class _Bar:
    """A tqdm bar on stderr, silent when stderr is not a terminal."""

    def __init__(self, total: int, desc: str):
        from tqdm import tqdm
        self._bar = tqdm(total=total, desc=desc, disable=not sys.stderr.isatty(),
                         leave=False)

    def update(self, n: int = 1) -> None:
        self._bar.update(n)

    def close(self) -> None:
        self._bar.close()


def _goals(res: Dict[str, object]) -> Dict[str, Dict[str, object]]:
    out = {}
    for key, (goal, kind) in GOALS.items():
        if key not in res:
            continue
        value = float(res[key])
        ok = value <= goal if kind == 'max' else value >= goal
        out[key] = {'value': value, 'goal': goal, 'kind': kind, 'passed': bool(ok)}
    return out


def run(args) -> Dict[str, object]:
    """Run the parts not skipped; returns the results with per-figure goals and ``passed``."""
    res: Dict[str, object] = {'bench': 'perf'}
    wall = {}
    if 'online' not in args.skip:
        from legid_ros.bench.perf_online import online_update_timing
        t0 = time.perf_counter()
        res.update(online_update_timing(args.online_duration, load_robot('biped'), _Bar))
        wall['online'] = time.perf_counter() - t0
    if 'identify' not in args.skip:
        from legid_ros.bench.perf_identify import measure_identify
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix='legid_perf_') as tmp:
            workdir = Path(args.workdir) if args.workdir else Path(tmp)
            workdir.mkdir(parents=True, exist_ok=True)
            ident = measure_identify(workdir, duration_s=args.bag_duration,
                                     rounds=args.identify_rounds)
        res.update({f'identify_{k}' if not k.startswith('identify') else k: v
                    for k, v in ident.items() if k not in ('identify_over_read_ratio',
                                                           'per_round')})
        res['identify_per_round'] = ident['per_round']
        for method, ratio in ident['identify_over_read_ratio'].items():
            res[f'identify_over_read_ratio_{method}'] = ratio
        wall['identify'] = time.perf_counter() - t0
    if 'buffer' not in args.skip:
        from legid_ros.bench.perf_buffer import measure_buffer_core_pct
        t0 = time.perf_counter()
        buf = measure_buffer_core_pct(args.buffer_seconds, args.buffer_runs)
        res.update({k if k.startswith('buffer') else f'buffer_{k}': v for k, v in buf.items()
                    if k != 'passed'})
        res['buffer_samples_dropped'] = buf.get('samples_dropped')
        wall['buffer'] = time.perf_counter() - t0
    res['wall_s'] = {k: round(v, 1) for k, v in wall.items()}
    res['goals'] = _goals(res)
    res['passed'] = all(g['passed'] for g in res['goals'].values())
    for key, g in res['goals'].items():
        mark = 'ok ' if g['passed'] else 'MISS'
        sign = '<=' if g['kind'] == 'max' else '>='
        print(f'[perf] {mark} {key} = {g["value"]:.3g} (goal {sign} {g["goal"]:g})',
              file=sys.stderr)
    for name, ms in res.get('online_update_ms_by_set', {}).items():  # reported, no goal
        solve = res.get('online_solve_ms_by_set', {}).get(name, float('nan'))
        print(f'[perf] --  online update on the {name} set = {ms:.3g} ms (Newton {solve:.3g} ms)',
              file=sys.stderr)
    return res
