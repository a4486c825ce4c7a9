"""Batch identification against the cost of reading its bag: ``legid identify`` (zmp_qp, and
zmp_newton on the grouped set) timed as a process next to a process that only reads the same
bag's messages.

Used by ``legid bench perf``. The reference read is the project's reader reading the bag's
messages into arrays (:func:`legid_ros.bag.recording_io.read_bag`, what ``legid identify``
reads through); a second, stricter reference takes the same messages as raw bytes only
(:func:`legid_ros.bag.reader.read_with` and :func:`legid_ros.bag.codec.collect`, no decoding),
reported beside it. Each figure is one process: wall time from start to exit, CPU time and
peak resident memory from ``os.wait4``'s rusage. The processes run one after the other, reads
first; with other load on the machine the ratios are the figures to compare, and the CPU-time
ratios are the steadier ones.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, Tuple

from legid_ros.core.errors import LegidError

#: Exit codes of a finished ``legid identify``: 0, or 3 when the set is not physically
#: consistent (parameters and report written, no URDF): the work timed is the same.
IDENTIFY_DONE = (0, 3)

#: Identify runs timed: name -> extra ``legid identify`` arguments.
METHODS = {'zmp_qp': ['--method', 'zmp_qp', '--param-set', 'standard'],  # as before auto
           'zmp_newton': ['--method', 'zmp_newton', '--param-set', 'grouped']}

_READ = '''
import sys
from legid_ros.bag.recording_io import read_bag
print(len(read_bag(sys.argv[1]).t))
'''

_READ_RAW = '''
import sys
from legid_ros.bag.codec import TYPES, collect
from legid_ros.bag.discover import locate_bag
from legid_ros.bag.reader import read_with
found = read_with(locate_bag(sys.argv[1]), lambda r: collect(r, set(TYPES.values())))
print(sum(len(logs) for _, logs, _ in found.values()))
'''


def _legid() -> str:
    """The ``legid`` executable beside this interpreter (else the one on the PATH)."""
    exe = Path(sys.executable).parent / 'legid'
    return str(exe) if exe.exists() else 'legid'


# A small process between the bench and the measured one: Linux carries the forking
# process's peak memory into its child's (the pre-exec image counts), so a child forked by
# the bench itself (hundreds of MB after its online part) would report the bench's peak.
_TIMER = '''
import json, os, sys, time
log = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, use = os.wait4(pid, 0)
print(json.dumps([time.perf_counter() - t0, use.ru_maxrss / 1024.0,
                  use.ru_utime + use.ru_stime, os.waitstatus_to_exitcode(status)]))
'''


def timed_process(cmd, log: Path, ok_codes=(0,)) -> Tuple[float, float, float]:
    """Run ``cmd`` (stdout and stderr into ``log``); (wall time [s], peak RSS [MB], CPU time
    [s], user and system: what other load on the machine does not lengthen). Its children's
    are included (``legid identify``'s second process); the timing process between the bench
    and ``cmd`` keeps the bench's own memory out of the peak.

    Raises:
        LegidError: The process exited with a code outside ``ok_codes`` (the log's last lines
            say why).
    """
    env = dict(os.environ, OPENBLAS_NUM_THREADS='1')
    out = subprocess.run([sys.executable, '-c', _TIMER, str(log)] + [str(c) for c in cmd],
                         capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    try:
        wall, rss, cpu, code = json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError) as exc:
        raise LegidError(f'timing {" ".join(map(str, cmd[:3]))} failed: {out.stderr[-300:]}'
                         ) from exc
    if code not in ok_codes:
        tail = Path(log).read_text(errors='replace').splitlines()[-5:]
        raise LegidError(f'{" ".join(map(str, cmd[:3]))} ... exited {code}: '
                         + ' | '.join(tail))
    return wall, rss, cpu


def bag_size_mb(bag: Path) -> float:
    """Size on disk of the bag directory's files [MB]."""
    return sum(p.stat().st_size for p in Path(bag).rglob('*') if p.is_file()) / 1e6


def make_bag(workdir: Path, duration_s: float, rate_hz: float) -> Path:
    """The synthetic biped bag of this length and rate in ``workdir`` (made once, reused)."""
    bag = Path(workdir) / f'perf_{duration_s:g}s_{rate_hz:g}hz'
    if not (bag / 'metadata.yaml').is_file():
        timed_process([_legid(), 'simulate', '--duration', duration_s, '--rate', rate_hz,
                       '--out', bag, '--force'], Path(workdir) / 'simulate.log')
    return bag


def measure_identify(workdir, duration_s: float = 100.0, rate_hz: float = 1000.0,
                     rounds: int = 3) -> Dict:
    """Wall time and peak memory of ``legid identify`` against reading the same bag.

    ``rounds`` rounds, each a read, a raw read and one identify per method, one process after
    the other; each identify is divided by the read of its own round, and the median over the
    rounds is the figure (a load spike on the shared machine then spoils one round, not the
    figure).

    Args:
        workdir: Directory for the bag (cached there), the outputs and the logs.
        duration_s: Length of the synthetic run [s].
        rate_hz: Its recording rate [Hz].
        rounds: Rounds of measurements (>= 1).

    Returns:
        ``{'identify_over_read_ratio': {method: median ratio}, 'identify_peak_rss_over_bag':
        max over methods and rounds of peak RSS / bag size, 'read_s', 'read_peak_rss_mb',
        'identify_s': {method: median s}, 'identify_peak_rss_mb': {method: MB}, 'bag_mb',
        'duration_s', 'rate_hz', 'rounds'}`` and the same ratios in CPU time
        (``'identify_over_read_cpu_ratio'``) and against the raw read
        (``'identify_over_read_raw_ratio'``); per-round lists under ``'per_round'``.
    """
    import numpy as np

    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    bag = make_bag(workdir, duration_s, rate_hz)
    size = bag_size_mb(bag)
    scripts = {}
    for name, script in (('read', _READ), ('read_raw', _READ_RAW)):
        with tempfile.NamedTemporaryFile('w', suffix='.py', dir=workdir, delete=False) as f:
            f.write(script)
        scripts[name] = f.name
    runs = {k: [] for k in ('read', 'read_raw', *METHODS)}  # (wall, rss, cpu) per round
    try:
        for _ in range(max(1, int(rounds))):
            for name, path in scripts.items():
                runs[name].append(timed_process([sys.executable, path, bag],
                                                workdir / f'{name}.log'))
            for name, extra in METHODS.items():
                runs[name].append(timed_process(
                    [_legid(), 'identify', '--bag', bag, '--out', workdir / f'out_{name}',
                     '--quiet'] + extra, workdir / f'identify_{name}.log',
                    ok_codes=IDENTIFY_DONE))
    finally:
        for path in scripts.values():
            os.unlink(path)

    def med(values):
        return float(np.median(values))

    def ratio(method, ref, col):
        return med([m[col] / r[col] for m, r in zip(runs[method], runs[ref])])

    return {'identify_over_read_ratio': {k: ratio(k, 'read', 0) for k in METHODS},
            'identify_peak_rss_over_bag': max(r[1] for k in METHODS for r in runs[k]) / size,
            'read_s': med([r[0] for r in runs['read']]),
            'read_peak_rss_mb': max(r[1] for r in runs['read']),
            'identify_s': {k: med([r[0] for r in runs[k]]) for k in METHODS},
            'identify_peak_rss_mb': {k: max(r[1] for r in runs[k]) for k in METHODS},
            'bag_mb': size, 'read_cpu_s': med([r[2] for r in runs['read']]),
            'identify_cpu_s': {k: med([r[2] for r in runs[k]]) for k in METHODS},
            'identify_over_read_cpu_ratio': {k: ratio(k, 'read', 2) for k in METHODS},
            'read_raw_s': med([r[0] for r in runs['read_raw']]),
            'identify_over_read_raw_ratio': {k: ratio(k, 'read_raw', 0) for k in METHODS},
            'per_round': {k: [[round(x, 3) for x in r] for r in v] for k, v in runs.items()},
            'duration_s': float(duration_s), 'rate_hz': float(rate_hz),
            'rounds': int(max(1, rounds))}


if __name__ == '__main__':  # python -m legid_ros.bench.perf_identify WORKDIR [DURATION RATE]
    print(json.dumps(measure_identify(sys.argv[1], *map(float, sys.argv[2:4])), indent=1))
