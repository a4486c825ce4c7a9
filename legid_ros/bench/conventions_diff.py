"""How far a variant's identified parameters are from the canonical recording's
(``legid bench conventions``, issue 24's ``variant_param_diff_pct_max``).

Two figures, both the largest difference over parameters in % of each parameter or, when
smaller, of its scale (:func:`pct`):

- :func:`determined_diff` (the issue's figure: "over the identifiable combinations"): the
  difference in the combinations the canonical result's data determine, decided from its
  own uncertainty as ``legid bench excitation`` (issue 26) does: a combination (an
  eigen-direction of the core information,
  :mod:`legid_ros.core.identification.uncertainty`) whose std is within 2 % of the masses
  and 3 mm of the COM coordinates it reads
  (:func:`legid_ros.core.excitation.information.determined`). The core difference keeps only
  its components along those (and the total mass, which the fit holds to the measured
  weight) (:meth:`~legid_ros.core.identification.uncertainty.Uncertainty.identifiable_part`);
  per core parameter, a mass in % of its value, a COM coordinate in % of the larger of its
  value and its core scale (2 cm, the prior width the sets give a COM). On a grouped core the
  difference is read through the first moments
  (:func:`legid_ros.core.metrics.first_moment_error`): the rows determine combinations of
  masses and first moments, and a difference in (mass, COM) adds ``dm dc`` terms of the
  directions they do not determine. The core is the set
  the method fitted: zmp_newton's grouped per-side set (mass and 3-D COM per link side); for
  the floating-base rows (``floating_qp``, ``sdp``: the result's uncertainty is on the ZMP
  reduced set of Wu & Gao 2021, axial COM and mass per link group, linearised at the
  estimate with the other parameters fixed,
  :func:`legid_ros.core.identification.api.identify`); the online estimator's on its set.
  Also the largest difference of a determined combination in units of its std
  (``diff_std``: above ~1 the variant moved what the data determine by more than their own
  noise).
- :func:`all_params_pct` (kept beside it): every parameter, determined or not: zmp_newton's
  named parameters, the other methods' link masses with a 0.1 kg scale (Solo12's leg links
  weigh 20-160 g). On a standing robot most of them are held near CAD by the prior, and
  another sampling of the same run moves them by their (large) spread.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, Optional

import numpy as np

from legid_ros.core.excitation.information import determined
from legid_ros.core.metrics import first_moment_error

LINK_MASS_SCALE_KG = 0.1  # [kg] floor of a link mass's difference (all_params_pct)
DEFAULT_SCALE = 0.01  # [parameter unit] floor of a parameter without a core scale


def pct(ref: Dict[str, float], diff: Dict[str, float], scales: Dict[str, float]) -> float:
    """Largest ``100 |diff| / max(|ref|, scale)`` over the parameters of ``diff`` [%]."""
    return float(max((100.0 * abs(d) / max(abs(ref[k]), scales.get(k, DEFAULT_SCALE))
                      for k, d in diff.items()), default=0.0))


def all_params_pct(a, b) -> float:
    """Difference of results ``b`` and ``a`` over every parameter [%] (module docstring)."""
    if a.method in ('zmp_newton', 'online_zmp'):
        xa, xb = dict(zip(a.names, a.x)), dict(zip(b.names, b.x))
        scales = dict(zip(a.uncertainty.names, a.uncertainty.scales)) if a.uncertainty \
            else {}
    else:
        xa, xb = dict(enumerate(a.pi[0::10])), dict(enumerate(b.pi[0::10]))
        scales = {k: LINK_MASS_SCALE_KG for k in xa}
    return pct(xa, {k: xb[k] - xa[k] for k in xa}, scales)


def determined_diff(a, b) -> Optional[dict]:
    """Difference of result ``b`` from ``a`` in what ``a``'s data determine (module docstring).

    Returns:
        ``pct`` [%], ``diff_std`` (largest difference of a determined combination / its std
        [-]), ``combinations`` (how many are determined, of ``of``); None when either result
        has no uncertainty or their cores differ.
    """
    u, ub = a.uncertainty, b.uncertainty
    if u is None or ub is None or sorted(u.names) != sorted(ub.names) or not u.vectors.size:
        return None
    xb = dict(zip(ub.names, ub.value))
    # b - a through the first moments at a (what the rows determine; the (m, c) difference
    # adds dm dc terms of the directions they do not, core/metrics.py)
    delta = -first_moment_error(u.value, np.array([xb[n] for n in u.names]), u.names)
    ok = determined(u)
    part = dataclasses.replace(u, identifiable=ok).identifiable_part(delta)
    ref = dict(zip(u.names, u.value))
    scales = dict(zip(u.names, u.scales))
    moved = np.abs(u.vectors[ok] @ (delta / u.scales)) / np.maximum(
        np.asarray(u.combination_total_std)[ok], 1e-12)
    return {'pct': pct(ref, dict(zip(u.names, part)), scales),
            'diff_std': float(moved.max()) if moved.size else 0.0,
            'combinations': int(ok.sum()), 'of': int(ok.size)}
