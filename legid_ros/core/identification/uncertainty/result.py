"""The standard deviations of an identified set's core (:class:`Uncertainty`), as the batch
and sufficient-statistics forms give them (:mod:`legid_ros.core.identification.uncertainty.batch`,
:mod:`legid_ros.core.identification.uncertainty.normal`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List

import numpy as np


def total_std(data_std, held_std) -> np.ndarray:
    """Each combination's data std with the held parameters' pull (empty: none counted)
    [core-scale units]: :attr:`Uncertainty.combination_total_std`."""
    data = np.asarray(data_std, float)
    held = np.asarray(held_std, float)
    return np.hypot(data, held) if held.size == data.size else data


@dataclass
class Uncertainty:
    """Standard deviations of the core of an identified set.

    Attributes:
        names: Core parameter names (e.g. ``lc_thigh``, ``m_thigh``).
        value: Core values of the estimate [m, kg, kg.m].
        std: Standard deviation per core parameter (same units; 0 for held parameters): the
            spread of the estimate over noise and motion, with the estimator's prior (if any)
            holding the directions the data barely sees; where ``std_data`` is large the error
            there is the prior's bias, not this spread.
        scales: Core scale per parameter (units of the combinations).
        covariance: Core covariance of the estimate (SI units; of ``std``).
        combinations: Readable combination per eigen-direction, weakest first.
        vectors: (k, q) unit vectors of the combinations, in core-scale units.
        combination_std: Data-only standard deviation of each combination [core-scale units]
            (noise and model error).
        combination_held_std: Standard deviation of the pull of what the set holds at CAD
            along each combination [core-scale units] (empty: none counted);
            :attr:`combination_total_std` is both.
        identifiable: Whether each combination's total std is at most ``poor_spread``.
        n_blocks: Blocks of samples behind the score covariance.
        std_data: Standard deviation per core parameter from the data alone (``inf`` where the
            data has no information at all).
        prior: Prior weight used for ``std`` (0: none, ``std == std_data``).
        jacobian: (P, q) ``d pi / d x`` of the core (SI units), to carry the covariance to any
            quantity of the standard parameters.
        prior_width: How far the truth may be from CAD [core-scale units], counted in ``std``.
        covariance_pi: (P, P) covariance of the error of the standard parameters [SI]: the
            core's and what the set holds at CAD (for any quantity of ``pi``).
        covariance_noise: Core covariance of the spread over noise and motion alone (SI).
        covariance_data: Data-only covariance in core-scale units (finite part: see
            :meth:`std_data_along`).
    """

    names: List[str]
    value: np.ndarray
    std: np.ndarray
    scales: np.ndarray
    covariance: np.ndarray
    combinations: List[str] = field(default_factory=list)
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    combination_std: np.ndarray = field(default_factory=lambda: np.zeros(0))
    identifiable: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    n_blocks: int = 0
    std_data: np.ndarray = field(default_factory=lambda: np.zeros(0))
    prior: float = 0.0
    jacobian: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    prior_width: float = 0.0
    covariance_data: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    covariance_pi: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    covariance_noise: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    combination_held_std: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def combination_total_std(self) -> np.ndarray:
        """Each combination's std with the held parameters' pull [core-scale units]: what
        decides whether the data determine it (the data-only std alone called a combination of
        the biped's reduced set determined at 0.046 prior widths whose held pull is 0.33 and
        whose error was 1.06: z 23 in ``legid bench accuracy``'s ankle-F/T runs)."""
        return total_std(self.combination_std, self.combination_held_std)

    def std_data_along(self, vector: np.ndarray) -> float:
        """Data-only standard deviation of ``vector . x_scaled`` (``inf``: some of it along a
        combination the data do not see; 0 along the fixed directions: total mass, held)."""
        v = np.asarray(vector, float)
        if not self.vectors.size:
            return float('inf')
        c = self.vectors @ v
        if np.any(~np.isfinite(self.combination_std) & (np.abs(c) > 1e-3 * max(
                np.linalg.norm(v), 1e-300))):
            return float('inf')
        return float(np.sqrt(max(v @ self.covariance_data @ v, 0.0)))

    def std_along(self, vector: np.ndarray, noise_only: bool = False) -> float:
        """Standard deviation of ``vector . x_scaled`` (``vector`` in core-scale units);
        ``noise_only``: the spread over noise and motion alone (no prior bias, nothing held:
        what repeated runs of one robot scatter by)."""
        v = np.asarray(vector, float) / self.scales
        cov = self.covariance_noise if noise_only and self.covariance_noise.size \
            else self.covariance
        return float(np.sqrt(max(v @ cov @ v, 0.0)))

    def identifiable_part(self, error: np.ndarray) -> np.ndarray:
        """``error`` (core units) without its components along non-identifiable combinations.

        What is left is the error in the combinations the data determines (plus the directions
        fixed otherwise: total mass, held parameters).
        """
        e = np.asarray(error, float) / self.scales
        bad = self.vectors[~self.identifiable]
        if bad.size:
            q, _ = np.linalg.qr(bad.T)
            e = e - q @ (q.T @ e)
        return e * self.scales

    def as_dict(self) -> dict:
        """Plain form (for ``parameters.yaml``; ``None`` where the data do not see it)."""
        def num(v):
            return float(v) if np.isfinite(v) else None
        return {'parameters': {n: {'value': float(v), 'std': num(s), 'std_data': num(d)}
                               for n, v, s, d in zip(self.names, self.value, self.std,
                                                     self.std_data)},
                'combinations': [{'combination': c, 'std_scale_units': num(s),
                                  'identifiable': bool(ok)}
                                 for c, s, ok in zip(self.combinations,
                                                     self.combination_total_std,
                                                     self.identifiable)],
                'scales': {n: float(s) for n, s in zip(self.names, self.scales)},
                'n_blocks': int(self.n_blocks), 'prior': float(self.prior),
                'prior_width_scale_units': float(self.prior_width)}

    def lines(self) -> List[str]:
        """Readable lines: per parameter value +- std, then the combinations (no 'inf': what
        the data do not see is said in words)."""
        out = ['core parameters (std: noise, model and the prior toward CAD; then from the data '
               'alone):']
        for n, v, s, d in zip(self.names, self.value, self.std, self.std_data):
            unit, k = ('mm', 1e3) if n.startswith(('lc_', 'mx_', 'my_', 'mz_', 'cx_', 'cy_',
                                                 'cz_')) else ('kg', 1.0)
            std = f'+- {k * s:.2g}' if np.isfinite(s) else '(not determined: no prior)'
            data = f'{k * d:.2g}' if np.isfinite(d) else 'not determined'
            out.append(f'  {n} = {k * v:.4g} {std} {unit} (data alone: {data})')
        for c, s, ok in zip(self.combinations, self.combination_total_std, self.identifiable):
            std = f'{s:9.3g}' if np.isfinite(s) else '  not seen'
            out.append(f'  {"ok  " if ok else "POOR"} std {std} x scale: {c}')
        return out
