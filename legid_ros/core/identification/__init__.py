"""Inertial parameter identification of legged robots: one library, two uses.

Floating-base robots (the ZMP-feedback identification of Wu & Gao 2021, its joint-torque
baseline, the floating-base rows and primitive bodies of the Tencent patent application 2022)
and fixed-base geared legs (the two-step identification of Xiao, Qian & Luo 2025, the robust
three-loop identification and F-test of Zhu & Zhang) are built from the same pieces:

- :mod:`.rows`: what each sample contributes (ZMP/CoP rows, joint-torque and floating-base
  wrench rows, foot F/T rows, friction and rotor-inertia columns);
- :mod:`.parameters`: parameterisations (standard set, the ZMP reduced set, base parameters by
  QR, homogeneous primitive bodies, the ZMP's invariance curve);
- :mod:`.solvers`: OSQP QP, projected Newton, the pseudo-inertia LMI SDP, the robust loops,
  least squares by the normal equations;
- :mod:`.identifiability`: what the data determines (core conditioning, relative standard
  deviations, F-test); :mod:`.result`: ``IdentResult`` (floating base) and ``LegIdentResult``
  (fixed base).

Entry points: :func:`.api.identify` (batch, floating base, one of :data:`METHODS`),
:class:`.online.OnlineEstimator` (online), :mod:`.fixed_base` (geared leg),
:mod:`.solvers.robust` (geared leg, robust). Also :mod:`.prepare` (recording -> samples),
:mod:`.excitation_trajectory` (excitation design), :mod:`.report` and :mod:`.threads`.
Imported lazily here so that ``import legid_ros.core.identification.parameters.sets`` stays
light.
"""

#: Batch identification methods of :func:`legid_ros.core.identification.api.identify`.
METHODS = ('zmp_newton', 'zmp_qp', 'torque_ls', 'floating_qp', 'sdp', 'primitives')


def identify(recording, robot, method='zmp_qp', **options):
    """See :func:`legid_ros.core.identification.api.identify`."""
    from legid_ros.core.identification.api import identify as _identify
    return _identify(recording, robot, method, **options)


def __getattr__(name):
    """Lazy access to ``OnlineEstimator``, ``IdentResult`` and ``limit_blas_threads``."""
    if name == 'OnlineEstimator':
        from legid_ros.core.identification.online import OnlineEstimator
        return OnlineEstimator
    if name == 'IdentResult':
        from legid_ros.core.identification.result import IdentResult
        return IdentResult
    if name == 'limit_blas_threads':
        from legid_ros.core.identification.threads import limit_blas_threads
        return limit_blas_threads
    raise AttributeError(name)
