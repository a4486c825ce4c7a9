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

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, Tuple

from legid_ros.core.errors import LegidError

#: Exit codes of a finished ``legid identify``: 0, or 3 when the set is not physically
#: consistent (parameters and report written, no URDF): the work timed is the same.
IDENTIFY_DONE = (0, 3)

#: Identify runs timed: name -> extra ``legid identify`` arguments.
METHODS = {'zmp_qp': ['--method', 'zmp_qp'],
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


def timed_process(cmd, log: Path, ok_codes=(0,)) -> Tuple[float, float, float]:
    """Run ``cmd`` (stdout and stderr into ``log``); (wall time [s], peak RSS [MB], CPU time
    [s], user and system: what other load on the machine does not lengthen).

    Raises:
        LegidError: The process exited with a code outside ``ok_codes`` (the log's last lines
            say why).
    """
    env = dict(os.environ, OPENBLAS_NUM_THREADS='1')
    with open(log, 'wb') as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen([str(c) for c in cmd], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in ok_codes:
        tail = Path(log).read_text(errors='replace').splitlines()[-5:]
        raise LegidError(f'{" ".join(map(str, cmd[:3]))} ... exited {proc.returncode}: '
                         + ' | '.join(tail))
    # ru_maxrss: [KiB] on Linux
    return wall, usage.ru_maxrss / 1024.0, usage.ru_utime + usage.ru_stime


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


def measure_identify(workdir, duration_s: float = 100.0, rate_hz: float = 1000.0) -> Dict:
    """Wall time and peak memory of ``legid identify`` against reading the same bag.

    Args:
        workdir: Directory for the bag (cached there), the outputs and the logs.
        duration_s: Length of the synthetic run [s].
        rate_hz: Its recording rate [Hz].

    Returns:
        ``{'identify_over_read_ratio': {method: ratio}, 'identify_peak_rss_over_bag': max
        over methods of peak RSS / bag size, 'read_s', 'read_peak_rss_mb', 'identify_s':
        {method: s}, 'identify_peak_rss_mb': {method: MB}, 'bag_mb', 'duration_s',
        'rate_hz'}`` and the same ratios in CPU time (``'read_cpu_s'``, ``'identify_cpu_s'``,
        ``'identify_over_read_cpu_ratio'``: steadier than wall time on a loaded machine).
    """
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    bag = make_bag(workdir, duration_s, rate_hz)
    size = bag_size_mb(bag)
    reads = {}
    for name, script in (('read', _READ), ('read_raw', _READ_RAW)):
        with tempfile.NamedTemporaryFile('w', suffix='.py', dir=workdir, delete=False) as f:
            f.write(script)
        try:
            reads[name] = timed_process([sys.executable, f.name, bag], workdir / f'{name}.log')
        finally:
            os.unlink(f.name)
    read_s, read_rss, read_cpu = reads['read']
    times, rss, cpu = {}, {}, {}
    for name, extra in METHODS.items():
        times[name], rss[name], cpu[name] = timed_process(
            [_legid(), 'identify', '--bag', bag, '--out', workdir / f'out_{name}', '--quiet']
            + extra, workdir / f'identify_{name}.log', ok_codes=IDENTIFY_DONE)
    return {'identify_over_read_ratio': {k: t / read_s for k, t in times.items()},
            'identify_peak_rss_over_bag': max(rss.values()) / size,
            'read_s': read_s, 'read_peak_rss_mb': read_rss, 'identify_s': times,
            'identify_peak_rss_mb': rss, 'bag_mb': size, 'read_cpu_s': read_cpu,
            'identify_cpu_s': cpu,
            'identify_over_read_cpu_ratio': {k: c / read_cpu for k, c in cpu.items()},
            'read_raw_s': reads['read_raw'][0], 'read_raw_cpu_s': reads['read_raw'][2],
            'identify_over_read_raw_ratio': {k: t / reads['read_raw'][0]
                                             for k, t in times.items()},
            'duration_s': float(duration_s), 'rate_hz': float(rate_hz)}


if __name__ == '__main__':  # python -m legid_ros.bench.perf_identify WORKDIR [DURATION RATE]
    import json
    print(json.dumps(measure_identify(sys.argv[1], *map(float, sys.argv[2:4])), indent=1))
