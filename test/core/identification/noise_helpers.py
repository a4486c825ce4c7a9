"""Noise shared by neighbouring rows, for the uncertainty tests (not a test module)."""

import numpy as np


def coloured(rng, n, std, rho=0.8):
    """AR(1) noise (n, 2) of std ``std``: neighbouring rows share their noise, as after
    filtering (a correlation time of (1 + rho) / (1 - rho) rows)."""
    e = rng.normal(0.0, std * np.sqrt(1 - rho ** 2), (n, 2))
    out = np.empty_like(e)
    out[0] = rng.normal(0.0, std, 2)
    for k in range(1, n):
        out[k] = rho * out[k - 1] + e[k]
    return out


def coverage_ratio(values, uncs, by_noise=False):
    """Along the combinations the first uncertainty of ``uncs`` calls identifiable (``by_noise``:
    the ones the data see, data-only std within the prior width, whose noise std alone is
    within the identifiable spread, 0.05 scale units): the mean reported noise std over the
    spread of ``values`` (core values per seed) [-]."""
    ref = uncs[0]
    if by_noise:
        noise = np.array([ref.std_along(v, noise_only=True) for v in ref.vectors])
        vecs = ref.vectors[(ref.combination_std <= ref.prior_width) & (noise <= 0.05)]
    else:
        vecs = ref.vectors[ref.identifiable]
    assert len(vecs) >= 1
    proj = np.array([(v / ref.scales) @ vecs.T for v in values])
    reported = np.array([[u.std_along(v, noise_only=True) for v in vecs] for u in uncs])
    return reported.mean(axis=0) / proj.std(axis=0, ddof=1)
