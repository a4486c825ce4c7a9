"""Online ankle F/T rows: the swinging feet weighed by their own force/torque sensors.

Every sample where a foot swings adds six rows ``Y_S(q, v, a) pi_foot = [f, n]`` (the foot
below its ankle F/T, :mod:`legid_ros.core.identification.rows.foot_ft`), divided by
``ft_sigma`` (force [N], moment [N.m]) so they are unit-variance like the other rows. They only
touch the foot's 10 standard columns and are kept in statistics of their own (same forgetting),
added to the main ones at each update: the ZMP alone cannot tell the foot mass from the
shank's, the swinging foot's F/T weighs it.
"""

from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.rows.foot_ft import feet_regressors, foot_joint
from legid_ros.core.identification.rows.linear import Normal
from legid_ros.core.inertial import PARAMS_PER_LINK
from legid_ros.core.robot import Robot

FT_SIGMA = (2.0, 0.1)  # ankle F/T row scales: force [N], moment [N.m]


class AnkleFtRows:
    """Statistics of the swinging feet's ankle F/T rows (standard columns only).

    Args:
        robot: Floating-base robot whose feet have F/T frames.
        n_params: Number of standard parameters (10 per link).
        ft_sigma: Row scales ``(force [N], moment [N.m])``.
    """

    def __init__(self, robot: Robot, n_params: int, ft_sigma=FT_SIGMA):
        self.robot = robot
        self.ft_sigma = np.broadcast_to(np.asarray(ft_sigma, float), (2,)).copy()
        if not np.all(np.isfinite(self.ft_sigma)) or np.any(self.ft_sigma <= 0):
            raise BadInputError(f'ft_sigma {ft_sigma} must be two positive numbers [N, N.m]')
        self.normal = Normal(n_params)
        self.rows = 0.0  # rows folded (weighted by the forgetting)
        self.dropped = 0  # swing samples with a non-finite reading

    def check(self, ankle_ft, n: int) -> Dict[str, np.ndarray]:
        """Validated readings ``{foot: (n, 6)}`` (empty without).

        Raises:
            BadInputError: Not a dict, an unknown foot, a foot without an F/T frame or a shape
                other than (n, 6).
        """
        if ankle_ft is None:
            return {}
        if not isinstance(ankle_ft, dict):
            raise BadInputError(f'ankle_ft must be a dict foot -> (N, 6), got '
                                f'{type(ankle_ft).__name__}')
        out = {}
        for foot, w in ankle_ft.items():
            foot_joint(self.robot, foot)  # BadInputError: unknown foot or no F/T frame
            w = np.asarray(w, float)
            if w.shape != (n, 6):
                raise BadInputError(f'ankle_ft[{foot!r}] has shape {w.shape}, expected ({n}, 6)')
            out[foot] = w
        return out

    def decay(self, factor: float) -> None:
        """Multiply the statistics by the forgetting ``factor``."""
        self.normal.H *= factor
        self.normal.h *= factor
        self.normal.bb *= factor
        self.normal.n *= factor
        self.rows *= factor

    def fold(self, ft: Dict[str, np.ndarray], free: Dict[str, np.ndarray], idx: np.ndarray,
             sup: np.ndarray, state: Dict[str, np.ndarray],
             weights: Optional[np.ndarray] = None) -> None:
        """Fold the rows of the samples ``idx`` where a foot swings.

        Args:
            ft: Per foot, readings of the whole window (N, 6) [N, N.m].
            free: Per foot, (len(idx),) bool: the foot touches nothing.
            idx: Window indices of the folded samples.
            sup: Support foot per folded sample.
            state: Floating-base ``q, v, a`` of the folded samples.
            weights: Forgetting weight per folded sample (default ones).
        """
        if not ft:
            return
        w_s = np.ones(idx.size) if weights is None else np.asarray(weights, float)
        scale = np.repeat(1.0 / self.ft_sigma, 3)  # per row: force [1/N], moment [1/(N.m)]
        use = {}
        for foot, w in ft.items():
            swing = (sup != foot) & free[foot]
            good = np.isfinite(w[idx]).all(axis=1)
            self.dropped += int(np.sum(swing & ~good))
            if np.any(swing & good):
                use[foot] = np.flatnonzero(swing & good)
        if not use:
            return
        ks = np.unique(np.concatenate(list(use.values())))
        pos = {k: i for i, k in enumerate(ks)}
        regs = feet_regressors(self.robot, state['q'][ks], state['v'][ks], state['a'][ks],
                               list(use))
        for foot, rows in use.items():
            y = regs[foot][[pos[k] for k in rows]] * scale[None, :, None]  # (m, 6, 10)
            b = (ft[foot][idx[rows]] * scale[None, :]).reshape(-1)
            a = y.reshape(-1, PARAMS_PER_LINK)
            wr = np.repeat(w_s[rows], 6)
            j0 = PARAMS_PER_LINK * (foot_joint(self.robot, foot)[0] - 1)
            cols = slice(j0, j0 + PARAMS_PER_LINK)
            self.normal.H[cols, cols] += (a * wr[:, None]).T @ a
            self.normal.h[cols] += (a * wr[:, None]).T @ b
            self.normal.bb += float(b @ (wr * b))
            self.normal.n += float(np.sum(w_s[rows]))
            self.rows += float(np.sum(wr))

    def residual_rms(self, x: np.ndarray) -> float:
        """RMS of the F/T rows at ``x`` [row sigmas] (NaN without rows)."""
        if self.rows <= 0:
            return float('nan')
        return float(np.sqrt(max(self.normal.residual_sq(x), 0.0) / self.rows))
