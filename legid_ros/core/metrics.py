"""Accuracy metrics of identified parameters: ZMP deviation, mass/COM errors, torque errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

from legid_ros.core.inertial import PARAMS_PER_LINK, unpack


@dataclass
class ZmpDeviation:
    """Euclidean distance between model and measured ZMP.

    Attributes:
        mean_mm: Mean [mm].
        p95_mm: 95th percentile [mm].
        max_mm: Maximum [mm].
        n: Samples.
    """

    mean_mm: float
    p95_mm: float
    max_mm: float
    n: int


def zmp_deviation(zmp_model: np.ndarray, zmp_measured: np.ndarray) -> ZmpDeviation:
    """Mean, 95th percentile and max of ``|p_model - p_measured|`` (non-finite rows ignored)."""
    d = np.linalg.norm(np.asarray(zmp_model) - np.asarray(zmp_measured), axis=1)
    d = d[np.isfinite(d)] * 1e3
    if d.size == 0:
        return ZmpDeviation(float('nan'), float('nan'), float('nan'), 0)
    return ZmpDeviation(float(d.mean()), float(np.percentile(d, 95)), float(d.max()), d.size)


def mass_com_errors(pi: np.ndarray, pi_true: np.ndarray, link_names: List[str]
                    ) -> Dict[str, Dict[str, float]]:
    """Per link: mass error [%] and COM error [mm] against the truth."""
    out = {}
    for i, name in enumerate(link_names):
        sl = slice(PARAMS_PER_LINK * i, PARAMS_PER_LINK * (i + 1))
        m, h, _ = unpack(pi[sl])
        mt, ht, _ = unpack(pi_true[sl])
        c = h / m if m > 0 else np.full(3, np.nan)
        out[name] = {'mass_err_pct': float(100 * (m - mt) / mt),
                     'com_err_mm': float(1e3 * np.linalg.norm(c - ht / mt))}
    return out


def reduced_errors(x: np.ndarray, x_true: np.ndarray, names: List[str]) -> Dict[str, float]:
    """ZMP reduced set (Wu & Gao 2021): mass errors [%] (m_*) and COM errors [mm] (lc_*)."""
    out = {}
    for v, vt, n in zip(x, x_true, names):
        out[n] = float(1e3 * (v - vt)) if n.startswith('lc_') else float(100 * (v - vt) / vt)
    return out


def reduced_group_errors(red, pi: np.ndarray, pi_true: np.ndarray) -> dict:
    """Per link group of the ZMP reduced set ``red``: mass error [%] and axial COM error [mm].

    ``pi``, ``pi_true``: standard parameters; with a shank and a foot group, also the error of
    their summed mass (``shank+foot``), which the ZMP sees better than either.
    """
    est, tru = red.from_standard(pi), red.from_standard(pi_true)
    g = red.n_groups
    names = [grp.name for grp in red.groups]
    out = {'mass_err_pct': {n: float(100 * (est[g + i] - tru[g + i]) / tru[g + i])
                            for i, n in enumerate(names)},
           'com_err_mm': {n: float(1e3 * (est[i] - tru[i])) for i, n in enumerate(names)}}
    if 'shank' in names and 'foot' in names:
        i, j = names.index('shank'), names.index('foot')
        out['mass_err_pct']['shank+foot'] = float(
            100 * (est[g + i] + est[g + j] - tru[g + i] - tru[g + j]) / (tru[g + i] + tru[g + j]))
    return out


def identifiable_reduced_errors(uncertainty, x: np.ndarray, x_true: np.ndarray, n_groups: int
                                ) -> Tuple[np.ndarray, np.ndarray]:
    """Reduced-set errors in the combinations an estimate's own uncertainty calls identifiable.

    The error ``x - x_true`` (ZMP reduced set of Wu & Gao 2021: ``n_groups`` axial COMs [m] then
    ``n_groups`` masses [kg]) without its components along the combinations
    ``uncertainty.identifiable_part`` leaves out
    (:mod:`legid_ros.core.identification.uncertainty`).

    Returns:
        (mass errors [%], COM errors [mm]), one per group.
    """
    x_true = np.asarray(x_true, float)
    e = uncertainty.identifiable_part(np.asarray(x, float) - x_true)
    g = n_groups
    return 100 * e[g:] / x_true[g:], 1e3 * e[:g]


def torque_rel_rms(tau_model: np.ndarray, tau_measured: np.ndarray) -> np.ndarray:
    """Per joint ``rms(tau_model - tau_meas) / rms(tau_meas)`` (non-finite rows ignored)."""
    ok = np.isfinite(tau_model).all(axis=1) & np.isfinite(tau_measured).all(axis=1)
    e = tau_model[ok] - tau_measured[ok]
    den = np.sqrt(np.mean(tau_measured[ok] ** 2, axis=0))
    return np.sqrt(np.mean(e ** 2, axis=0)) / np.maximum(den, 1e-12)


def condition_number(a: np.ndarray, scales: Optional[np.ndarray] = None) -> float:
    """2-norm condition number of ``A diag(scales)`` over its non-zero singular values."""
    a = np.asarray(a, float)
    if scales is not None:
        a = a * np.asarray(scales, float)[None, :]
    s = np.linalg.svd(a, compute_uv=False)
    s = s[s > 1e-12 * s[0]] if s.size and s[0] > 0 else s
    return float(s[0] / s[-1]) if s.size else float('inf')


#: A grouped unit's COM coordinates (the reduced set's axial ``lc_`` is read plainly: its
#: first-moment reading was tried and not kept, docs/identification.md)
COM_PREFIXES = ('cx_', 'cy_', 'cz_')


def first_moment_error(x: np.ndarray, x_true: np.ndarray, param) -> np.ndarray:
    """``x - x_true`` of a core as the data see it: through the first moments.

    The ZMP rows are linear in each unit's mass ``m`` and first moment ``h = m c`` [kg.m], not
    in its COM ``c``: what they determine is a combination of masses and first moments, which
    the uncertainty's combinations (in ``(m, c)``, linearised at the estimate) read to first
    order. Their difference, ``dm dc`` terms, is no error of the determined combination: a leg
    mass 20 % off (undetermined) times a leg COM 10 mm off moved a trunk COM combination by
    ~0.3 mm on Solo12, 17 of its std. So the error is taken exactly in ``(m, h)`` and mapped
    to ``(m, c)`` by the linearisation at ``x``: ``dm`` and ``(dh - c dm) / m`` per unit. Units
    are found by name (``m_<unit>`` with ``cx_/cy_/cz_<unit>``); every other entry (inertias,
    the reduced set's axial COMs) is the plain difference.

    Args:
        x: Estimate [kg, m, ...] (linearisation point).
        x_true: The other point (a truth, or another estimate) in the same core.
        param: The core (anything with ``names``, e.g. a
            :class:`~legid_ros.core.identification.parameters.grouped.GroupedSet`), or the
            names themselves.
    """
    names = list(getattr(param, 'names', param))
    x, x_true = np.asarray(x, float), np.asarray(x_true, float)
    e = x - x_true
    index = {n: k for k, n in enumerate(names)}
    for k, name in enumerate(names):
        if name[:3] in COM_PREFIXES and f'm_{name[3:]}' in index:
            j = index[f'm_{name[3:]}']
            if x[j] > 0:
                e[k] = x_true[j] * (x[k] - x_true[k]) / x[j]  # (dh - c dm) / m
    return e


def identifiable_grouped_errors(uncertainty, x: np.ndarray, x_true: np.ndarray, param
                                ) -> Tuple[np.ndarray, np.ndarray]:
    """Grouped-set errors in the combinations an estimate's own uncertainty calls identifiable.

    ``param``: the :class:`legid_ros.core.identification.parameters.grouped.GroupedSet` of
    ``x`` (per unit: mass [kg], COM [m] (, inertia)) and of ``uncertainty``'s core. The error
    (:func:`first_moment_error`: as the data see it) without its components along the
    combinations ``uncertainty.identifiable_part`` leaves out.

    Returns:
        (mass errors [%], COM error norms [mm]), one per unit (group or group side).
    """
    x_true = np.asarray(x_true, float)
    e = uncertainty.identifiable_part(first_moment_error(x, x_true, param))
    w = param.width
    units = range(param.n_groups)
    mass = np.array([100 * e[w * u] / x_true[w * u] for u in units])
    com = np.array([1e3 * np.linalg.norm(e[w * u + 1:w * u + 4]) for u in units])
    return mass, com
