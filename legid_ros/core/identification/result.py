"""The result every identification method returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

from legid_ros.core.inertial import ConsistencyReport


@dataclass
class IdentResult:
    """An identified parameter set and how it was obtained.

    Attributes:
        method: Method name ('zmp_newton', 'zmp_qp', 'torque_ls', 'floating_qp', 'sdp',
            'primitives', 'online').
        pi: Identified standard parameters (10 per moving body) [kg, kg.m, kg.m^2].
        x: Parameters in the method's own set (equal to ``pi`` for the standard set).
        names: Names of ``x``.
        param_names: Names of ``pi``.
        total_mass: Total mass the solution was constrained to [kg].
        condition_number: Condition number of the scaled identifiable core (see
            :mod:`legid_ros.core.identification.identifiability`).
        residual_rms: RMS residual of the fitted rows (metres for ZMP rows, N.m for torques).
        solve_time_s: Solver time [s].
        iterations: Solver iterations.
        consistency: Physical consistency of ``pi``.
        identifiable: Readable lines: excited parameter combinations and their spread.
        friction: Per-joint viscous [N.m.s/rad] then Coulomb [N.m] coefficients, if fitted.
        n_samples: Samples used.
        dropped: Reason -> number of samples dropped (NaN/inf, unloaded, double support).
        info: Extra method facts (solver status, weights, regularisation, ...).
    """

    method: str
    pi: np.ndarray
    x: np.ndarray
    names: List[str]
    param_names: List[str]
    total_mass: float
    condition_number: float
    residual_rms: float
    solve_time_s: float
    iterations: int
    consistency: ConsistencyReport
    identifiable: List[str] = field(default_factory=list)
    friction: Optional[np.ndarray] = None
    n_samples: int = 0
    dropped: Dict[str, int] = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    def summary(self) -> str:
        """A few readable lines."""
        lines = [f'method {self.method}: {self.n_samples} samples, total mass '
                 f'{self.total_mass:.3f} kg, residual rms {self.residual_rms:.4g}, condition '
                 f'number {self.condition_number:.3g}, {self.iterations} iterations, '
                 f'{self.solve_time_s * 1e3:.1f} ms, consistent: {self.consistency.ok}']
        if self.dropped:
            lines.append('dropped samples: ' + ', '.join(f'{k}: {v}'
                                                         for k, v in self.dropped.items()))
        if self.info.get('known'):
            lines.append('held fixed (measured otherwise): ' + ', '.join(
                f'{k} = {v:g}' for k, v in self.info['known'].items()))
        lines += self.identifiable
        return '\n'.join(lines)
