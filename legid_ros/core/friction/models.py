"""Joint friction models as small classes (Xiao, Qian & Luo 2025; Zhu & Zhang).

Every model maps joint velocity to friction torque, ``tau_f = model(qd)`` [N.m] for ``qd``
[rad/s] of any shape (vectorised over samples). Models that are linear in their parameters
(for fixed shape constants such as a Stribeck velocity or an exponent) expose
``regressor(qd) -> (..., k)`` with ``model(qd) == regressor(qd) @ theta``, so they can be
stacked as extra columns of an identification regressor. :class:`JointFriction` holds one
model per joint and is vectorised over samples *and* joints: ``(N, nj) -> (N, nj)``.

The sign is continuous, ``S(v) = tanh(k_v v)`` (Xiao, Qian & Luo 2025), so the models are
usable in a feedforward controller without chattering at reversal. :func:`smooth_sign` is the
one smoothed Coulomb sign of the package: the floating-base joint-torque rows use it too, with
their own velocity scale :data:`V_COULOMB`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import numpy as np

from legid_ros.core.errors import BadInputError

#: Gain of the continuous sign ``tanh(k_v v)`` of the joint friction models [s/rad].
DEFAULT_K_V = 200.0
#: Velocity scale of the Coulomb columns ``tanh(qd / V_COULOMB)`` of the floating-base
#: joint-torque rows (:mod:`legid_ros.core.identification.rows.regressors`) [rad/s].
V_COULOMB = 0.01
#: Largest jump of a :class:`Piecewise` model at its threshold accepted on load [N.m], ...
CONTINUITY_TOL_NM = 1e-3
#: ... or this fraction of the friction torque there, whichever is larger [-].
CONTINUITY_TOL_REL = 1e-2


def smooth_sign(v: np.ndarray, k_v: float = DEFAULT_K_V,
                v_scale: Optional[float] = None) -> np.ndarray:
    """Continuous sign of a velocity [rad/s]: ``tanh(k_v v)``, or ``tanh(v / v_scale)``.

    The one smoothed Coulomb sign of the package. The friction models give a gain ``k_v``
    [s/rad]; the floating-base rows give a velocity scale ``v_scale`` [rad/s] (which, when
    given, replaces ``k_v``; the division is kept as such so the rows stay bit-identical).
    """
    v = np.asarray(v, float)
    return np.tanh(v / v_scale) if v_scale is not None else np.tanh(k_v * v)


class FrictionModel:
    """Base class: one joint's friction law.

    Subclasses define ``names`` (parameter names), ``params`` (array, same order) and
    ``__call__``. Linear models also define ``regressor``.
    """

    names: Sequence[str] = ()
    linear: bool = False

    @property
    def params(self) -> np.ndarray:
        """Parameter vector in ``names`` order."""
        return np.array([getattr(self, n) for n in self.names], float)

    def set_params(self, theta: Sequence[float]) -> None:
        """Set the parameters from a vector in ``names`` order."""
        theta = np.asarray(theta, float).ravel()
        if theta.size != len(self.names):
            raise BadInputError(f'{type(self).__name__} takes {len(self.names)} parameters '
                                f'{list(self.names)}, got {theta.size}')
        for n, x in zip(self.names, theta):
            setattr(self, n, float(x))

    def as_dict(self) -> Dict[str, float]:
        """Parameters by name, plus the model kind."""
        out = {'kind': type(self).__name__}
        out.update({n: float(getattr(self, n)) for n in self.names})
        for extra in ('k_v', 'v_s', 'delta', 'v_th'):
            if hasattr(self, extra) and extra not in self.names:
                out[extra] = float(getattr(self, extra))
        return out

    def regressor(self, qd: np.ndarray) -> np.ndarray:
        """Columns ``Phi`` with ``tau_f = Phi @ params``; only for linear models."""
        raise NotImplementedError(f'{type(self).__name__} is not linear in its parameters')

    def __call__(self, qd: np.ndarray) -> np.ndarray:
        if not self.linear:
            raise NotImplementedError
        return self.regressor(qd) @ self.params

    def __repr__(self) -> str:
        body = ', '.join(f'{k}={v:.4g}' for k, v in self.as_dict().items() if k != 'kind')
        return f'{type(self).__name__}({body})'


@dataclass(repr=False)
class CoulombViscous(FrictionModel):
    """Symmetric Coulomb + viscous: ``f_c S(v) + f_v v``.

    Attributes:
        f_c: Coulomb torque [N.m].
        f_v: Viscous coefficient [N.m.s/rad].
        k_v: Gain of the continuous sign [s/rad].
    """

    f_c: float = 0.0
    f_v: float = 0.0
    k_v: float = DEFAULT_K_V
    names = ('f_c', 'f_v')
    linear = True

    def regressor(self, qd):
        """Columns ``[S(v), v]``."""
        v = np.asarray(qd, float)
        return np.stack([smooth_sign(v, self.k_v), v], axis=-1)


@dataclass(repr=False)
class AsymmetricCoulombViscous(FrictionModel):
    """Direction-dependent Coulomb + viscous with an offset.

    ``tau_f = h+ (f_cp + f_vp v) - h- (f_cn - f_vn v) + f_o`` with ``h+ = (1 + S(v))/2``,
    ``h- = (1 - S(v))/2``: positive-direction Coulomb ``f_cp`` and viscous ``f_vp``,
    negative-direction magnitudes ``f_cn`` and ``f_vn`` (all [N.m], [N.m.s/rad]), offset ``f_o``.
    """

    f_cp: float = 0.0
    f_cn: float = 0.0
    f_vp: float = 0.0
    f_vn: float = 0.0
    f_o: float = 0.0
    k_v: float = DEFAULT_K_V
    names = ('f_cp', 'f_cn', 'f_vp', 'f_vn', 'f_o')
    linear = True

    def regressor(self, qd):
        """Columns ``[h+, -h-, h+ v, h- v, 1]``."""
        v = np.asarray(qd, float)
        s = smooth_sign(v, self.k_v)
        hp, hn = 0.5 * (1 + s), 0.5 * (1 - s)
        return np.stack([hp, -hn, hp * v, hn * v, np.ones_like(v)], axis=-1)


@dataclass(repr=False)
class Stribeck(FrictionModel):
    """Stribeck + viscous: ``[f_c + (f_s - f_c) exp(-(|v|/v_s)^2)] S(v) + f_v v``.

    Linear in ``(f_c, f_s, f_v)`` for a fixed Stribeck velocity ``v_s`` [rad/s] (the
    "linear Stribeck" of Xiao, Qian & Luo 2025);
    :func:`legid_ros.core.friction.fitting.fit_model` also fits ``v_s``.
    """

    f_c: float = 0.0
    f_s: float = 0.0
    f_v: float = 0.0
    v_s: float = 0.1
    k_v: float = DEFAULT_K_V
    names = ('f_c', 'f_s', 'f_v')
    linear = True

    def regressor(self, qd):
        """Columns ``[S (1 - e), S e, v]`` with ``e = exp(-(|v|/v_s)^2)``."""
        v = np.asarray(qd, float)
        s = smooth_sign(v, self.k_v)
        e = np.exp(-(np.abs(v) / max(self.v_s, 1e-9)) ** 2)
        return np.stack([s * (1 - e), s * e, v], axis=-1)


@dataclass(repr=False)
class ExponentialViscous(FrictionModel):
    """Zhu & Zhang's asymmetric exponential-viscous law: ``f_c S(v) + f_v S(v)|v|^delta + f_o``.

    Linear in ``(f_c, f_v, f_o)`` for a fixed exponent ``delta`` [-]; the offset ``f_o``
    [N.m] makes it direction-asymmetric. The formula is our reconstruction (docs/methods.md).
    """

    f_c: float = 0.0
    f_v: float = 0.0
    f_o: float = 0.0
    delta: float = 1.0
    k_v: float = DEFAULT_K_V
    names = ('f_c', 'f_v', 'f_o')
    linear = True

    def regressor(self, qd):
        """Columns ``[S, S |v|^delta, 1]``."""
        v = np.asarray(qd, float)
        s = smooth_sign(v, self.k_v)
        return np.stack([s, s * np.abs(v) ** self.delta, np.ones_like(v)], axis=-1)


@dataclass(repr=False)
class Piecewise(FrictionModel):
    """The piecewise low/high-speed model of Xiao, Qian & Luo 2025, continuous at ``|v| = v_th``.

    Low speed (``|v| < v_th``), nonlinear (fitted by particle swarm):
    ``[f_sl + f_scl (1 - exp(-|v|/v_sl))] S(v) + f_vl v``.
    High speed, linear (fitted by weighted LS):
    ``f_sh S(v) + f_vh v + f1 v|v| + f2 v^3 + f3 v^3|v|``.
    The structure is the paper's; the branch formulas are our reconstruction (docs/methods.md).

    Attributes:
        v_th: Threshold speed [rad/s].
        f_sl, f_scl: Low-speed static level and static-Coulomb difference [N.m].
        v_sl: Low-speed characteristic velocity [rad/s].
        f_vl: Low-speed viscous coefficient [N.m.s/rad].
        f_sh, f_vh, f1, f2, f3: High-speed coefficients [N.m, N.m.s/rad, ...].
    """

    v_th: float = 0.3
    f_sl: float = 0.0
    f_scl: float = 0.0
    v_sl: float = 0.05
    f_vl: float = 0.0
    f_sh: float = 0.0
    f_vh: float = 0.0
    f1: float = 0.0
    f2: float = 0.0
    f3: float = 0.0
    k_v: float = DEFAULT_K_V
    names = ('f_sl', 'f_scl', 'v_sl', 'f_vl', 'f_sh', 'f_vh', 'f1', 'f2', 'f3')
    low_names = ('f_sl', 'f_scl', 'v_sl', 'f_vl')
    high_names = ('f_sh', 'f_vh', 'f1', 'f2', 'f3')

    def low(self, qd: np.ndarray) -> np.ndarray:
        """Low-speed branch [N.m] evaluated anywhere."""
        v = np.asarray(qd, float)
        mag = self.f_sl + self.f_scl * (1 - np.exp(-np.abs(v) / max(self.v_sl, 1e-9)))
        return mag * smooth_sign(v, self.k_v) + self.f_vl * v

    def high_regressor(self, qd: np.ndarray) -> np.ndarray:
        """Columns ``[S, v, v|v|, v^3, v^3|v|]`` of the high-speed branch."""
        v = np.asarray(qd, float)
        av = np.abs(v)
        return np.stack([smooth_sign(v, self.k_v), v, v * av, v ** 3, v ** 3 * av], axis=-1)

    def high(self, qd: np.ndarray) -> np.ndarray:
        """High-speed branch [N.m] evaluated anywhere."""
        theta = np.array([getattr(self, n) for n in self.high_names])
        return self.high_regressor(qd) @ theta

    def __call__(self, qd):
        v = np.asarray(qd, float)
        return np.where(np.abs(v) < self.v_th, self.low(v), self.high(v))

    def check_continuity(self, joint: str = '?') -> None:
        """Raise :class:`BadInputError` if the branches do not meet at ``|v| = v_th``.

        A fit makes them meet (the high-speed LS is constrained to the low branch's value at
        ``v_th``); a model written by hand or edited in a YAML file may not. Tolerance:
        :data:`CONTINUITY_TOL_NM` or :data:`CONTINUITY_TOL_REL` of the torque, the larger.

        Args:
            joint: Joint name, for the message.
        """
        for v in (self.v_th, -self.v_th):
            at = np.array([v])
            lo, hi = float(self.low(at)[0]), float(self.high(at)[0])
            tol = max(CONTINUITY_TOL_NM, CONTINUITY_TOL_REL * max(abs(lo), abs(hi)))
            if not abs(hi - lo) <= tol:
                sgn = float(smooth_sign(at, self.k_v)[0])
                fix = self.f_sh + (lo - hi) / sgn if sgn else float('nan')
                raise BadInputError(
                    f'piecewise friction model of joint {joint!r} is discontinuous at '
                    f'v = {v:+.4g} rad/s (v_th): low-speed branch {lo:.6g} N.m, high-speed '
                    f'branch {hi:.6g} N.m (jump {hi - lo:+.3g} N.m, tolerance {tol:.3g} '
                    f'N.m); refit the friction, or set f_sh = {fix:.6g} so the branches meet')


MODEL_KINDS = {cls.__name__: cls for cls in (CoulombViscous, AsymmetricCoulombViscous, Stribeck,
                                             ExponentialViscous, Piecewise)}


def model_from_dict(d: Dict[str, float], joint: str = '?') -> FrictionModel:
    """Rebuild a model from :meth:`FrictionModel.as_dict` output (e.g. loaded from YAML).

    Args:
        d: Parameters by name, with ``kind``.
        joint: Joint name, for the error messages.

    Raises:
        BadInputError: Unknown kind, or a :class:`Piecewise` model whose branches do not
            meet at the threshold (:meth:`Piecewise.check_continuity`).
    """
    d = dict(d)
    kind = d.pop('kind', None)
    if kind not in MODEL_KINDS:
        raise BadInputError(f'unknown friction model kind {kind!r}; known: {list(MODEL_KINDS)}')
    model = MODEL_KINDS[kind](**{k: float(v) for k, v in d.items()})
    if isinstance(model, Piecewise):
        model.check_continuity(joint)
    return model


@dataclass
class JointFriction:
    """One friction model per joint, vectorised over samples and joints.

    Attributes:
        joint_names: Joint names, in column order.
        models: One :class:`FrictionModel` per joint.
    """

    joint_names: List[str]
    models: List[FrictionModel] = field(default_factory=list)

    def __post_init__(self):
        if len(self.joint_names) != len(self.models):
            raise BadInputError(f'{len(self.models)} friction models for '
                                f'{len(self.joint_names)} joints')

    def __call__(self, qd: np.ndarray) -> np.ndarray:
        """Friction torques [N.m] for velocities ``qd`` [rad/s] of shape (nj,) or (N, nj)."""
        qd = np.asarray(qd, float)
        if qd.shape[-1] != len(self.models):
            raise BadInputError(f'velocity has {qd.shape[-1]} columns, expected '
                                f'{len(self.models)} ({self.joint_names})')
        return np.stack([m(qd[..., j]) for j, m in enumerate(self.models)], axis=-1)

    @property
    def params(self) -> Dict[str, Dict[str, float]]:
        """Parameters per joint (``as_dict`` of each model)."""
        return {n: m.as_dict() for n, m in zip(self.joint_names, self.models)}

    @classmethod
    def from_dict(cls, d: Dict[str, Dict[str, float]]) -> 'JointFriction':
        """Rebuild from :attr:`params` (piecewise models checked for continuity)."""
        return cls(list(d), [model_from_dict(v, joint=str(n)) for n, v in d.items()])
