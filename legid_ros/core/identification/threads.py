"""Limit the BLAS thread pools of numpy/scipy at run time.

On a loaded machine a multi-threaded OpenBLAS spends far more time synchronising its threads
than computing on the small matrices of identification (a 131x131 solve went from 0.2 ms to
150-250 ms with 8 busy processes on 2 cores). Setting ``OPENBLAS_NUM_THREADS=1`` before numpy
is imported does the same; this function does it afterwards, through ctypes, for every
OpenBLAS library already loaded in the process.
"""

from __future__ import annotations

import ctypes
from typing import List


_PREFIXES = ('openblas_', 'scipy_openblas_')


def _openblas_libs() -> List[ctypes.CDLL]:
    """The OpenBLAS libraries loaded in this process (numpy's and scipy's)."""
    import numpy  # noqa: F401
    import scipy.linalg  # noqa: F401

    try:
        with open('/proc/self/maps') as f:
            paths = {line.split()[-1] for line in f if 'openblas' in line.lower()
                     and line.rstrip().endswith('.so') or '.so.' in line and 'openblas'
                     in line.lower()}
    except OSError:
        return []
    libs = []
    for path in sorted(paths):
        try:
            libs.append(ctypes.CDLL(path))
        except OSError:
            continue
    return libs


def _symbol(lib: ctypes.CDLL, name: str):
    for prefix in _PREFIXES:
        for suffix in ('', '64_'):
            fn = getattr(lib, f'{prefix}{name}{suffix}', None)
            if fn is not None:
                return fn
    return None


def limit_blas_threads(n: int = 1) -> int:
    """Set numpy's and scipy's OpenBLAS to ``n`` threads; returns how many libraries were set.

    Imports numpy and scipy.linalg first so that their BLAS libraries are loaded.
    """
    done = 0
    for lib in _openblas_libs():
        fn = _symbol(lib, 'set_num_threads')
        if fn is not None:
            fn(int(n))
            done += 1
    return done


def blas_threads() -> List[int]:
    """Threads each loaded OpenBLAS library uses now (one entry per library)."""
    out = []
    for lib in _openblas_libs():
        fn = _symbol(lib, 'get_num_threads')
        if fn is not None:
            fn.restype = ctypes.c_int
            out.append(int(fn()))
    return out
