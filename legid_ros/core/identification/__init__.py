"""Inertial parameter identification of legged robots (seed 000 ZMP methods and baselines).

Entry points: :func:`legid_ros.core.identification.api.identify` (batch) and
:class:`legid_ros.core.identification.online.OnlineEstimator` (online). Imported lazily here so that
``import legid_ros.core.identification.parameters.sets`` stays light.
"""

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
