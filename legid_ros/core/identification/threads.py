"""Limit the BLAS thread pools of numpy/scipy at run time.

On a loaded machine a multi-threaded OpenBLAS spends far more time synchronising its threads
than computing on the small matrices of identification (a 131x131 solve went from 0.2 ms to
150-250 ms with 8 busy processes on 2 cores). Setting ``OPENBLAS_NUM_THREADS=1`` before numpy
is imported does the same; this function does it afterwards, through ctypes, for every
OpenBLAS library already loaded in the process.
"""

from __future__ import annotations

import ctypes


def limit_blas_threads(n: int = 1) -> int:
    """Set numpy's and scipy's OpenBLAS to ``n`` threads; returns how many libraries were set.

    Imports numpy and scipy.linalg first so that their BLAS libraries are loaded.
    """
    import numpy  # noqa: F401
    import scipy.linalg  # noqa: F401

    done = 0
    try:
        with open('/proc/self/maps') as f:
            libs = {line.split()[-1] for line in f if 'openblas' in line.lower()
                    and line.rstrip().endswith('.so') or '.so.' in line and 'openblas'
                    in line.lower()}
    except OSError:
        return 0
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for sym in ('openblas_set_num_threads', 'openblas_set_num_threads64_',
                    'scipy_openblas_set_num_threads', 'scipy_openblas_set_num_threads64_'):
            fn = getattr(lib, sym, None)
            if fn is not None:
                fn(int(n))
                done += 1
                break
    return done
