#!/usr/bin/env python3
"""Compare two folders of ``legid bench`` JSON results: accuracy numbers must match exactly.

Usage::

    python tools/bench_diff.py BEFORE_DIR AFTER_DIR [--rtol 1e-9] [--atol 1e-9]

Every number is compared leaf by leaf (nested dicts and lists, keys joined with ``/``). Leaves
whose key names a timing or a machine load (wall/CPU time, rates, latencies, jitter, speed-ups,
CPU share, update-time ratios) are listed apart with their after/before ratio and never fail
the comparison: on a shared machine they are noise. Every other number must agree within
``|a - b| <= atol + rtol |b|``; strings and booleans must be equal. Exit code 0 when every
accuracy leaf agrees, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import Dict, Iterator, Tuple

#: Key fragments that mark a timing or load figure (compared as a ratio, never failed on).
TIMING = re.compile(
    r'(^|_|/)(wall|elapsed|seconds|solve_time|time_s|cpu|latency|jitter|points_per_s|'
    r'speedup|real_time_factor|update_ms|update_wall|update_ratio|tau_ff_us|per_s$|'
    r'sim_wall|prepare_s|total_wall|hz_achieved|achieved_hz|rate_achieved|command|logs$|ms$|'
    r'rate_hz$|states_seen$|windows$|ratio$|ticks$|published$)', re.I)


def leaves(obj, prefix: str = '') -> Iterator[Tuple[str, object]]:
    """Yield ``(path, value)`` for every scalar leaf of a JSON value."""
    if isinstance(obj, dict):
        for key, val in obj.items():
            yield from leaves(val, f'{prefix}/{key}' if prefix else str(key))
    elif isinstance(obj, list):
        for i, val in enumerate(obj):
            yield from leaves(val, f'{prefix}[{i}]')
    else:
        yield prefix, obj


def is_timing(path: str) -> bool:
    """Whether a leaf path names a timing or load figure."""
    return bool(TIMING.search(re.sub(r'\[\d+\]', '', path)))


def same(a, b, rtol: float, atol: float) -> bool:
    """Equality of two leaves: numbers within tolerance (NaN equals NaN), others exactly."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return abs(a - b) <= atol + rtol * abs(b)
    return a == b


def compare(before: Path, after: Path, rtol: float, atol: float) -> Dict[str, list]:
    """Compare every ``*.json`` present in both folders; returns findings by kind."""
    out = {'differ': [], 'missing': [], 'timing': [], 'files': []}
    for fb in sorted(before.glob('*.json')):
        fa = after / fb.name
        if not fa.exists():
            out['missing'].append(f'{fb.name}: not in {after}')
            continue
        out['files'].append(fb.name)
        lb = dict(leaves(json.loads(fb.read_text())))
        la = dict(leaves(json.loads(fa.read_text())))
        for path in sorted(set(lb) | set(la)):
            if path not in la or path not in lb:
                where = after if path not in la else before
                out['missing'].append(f'{fb.name}:{path}: not in {where}')
                continue
            a, b = la[path], lb[path]
            if is_timing(path):
                if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b:
                    out['timing'].append(f'{fb.name}:{path}: {b:.4g} -> {a:.4g} '
                                         f'(x{a / b:.2f})')
                continue
            if not same(a, b, rtol, atol):
                out['differ'].append(f'{fb.name}:{path}: before {b!r}, after {a!r}')
    return out


def main(argv=None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('before', type=Path, help='folder of bench JSON files (reference)')
    parser.add_argument('after', type=Path, help='folder of bench JSON files (to check)')
    parser.add_argument('--rtol', type=float, default=1e-9, help='relative tolerance [-]')
    parser.add_argument('--atol', type=float, default=1e-9, help='absolute tolerance')
    parser.add_argument('--timings', action='store_true', help='list every timing ratio')
    args = parser.parse_args(argv)
    for folder in (args.before, args.after):
        if not folder.is_dir():
            print(f'bench_diff: error: {folder} is not a folder', file=sys.stderr)
            return 2
    res = compare(args.before, args.after, args.rtol, args.atol)
    n_timing = len(res['timing'])
    print(f'compared: {", ".join(res["files"]) or "nothing"}')
    for line in res['missing']:
        print(f'MISSING {line}')
    for line in res['differ']:
        print(f'DIFFER  {line}')
    if args.timings:
        for line in res['timing']:
            print(f'timing  {line}')
    print(f'{len(res["differ"])} accuracy leaves differ, {len(res["missing"])} missing, '
          f'{n_timing} timing leaves not compared')
    return 0 if not res['differ'] and not res['missing'] and res['files'] else 1


if __name__ == '__main__':
    sys.exit(main())
