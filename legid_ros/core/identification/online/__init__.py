"""Online identification: statistics folded window by window, solved warm-started.

:class:`OnlineEstimator` (:mod:`.estimator`) folds rows into sufficient statistics with a
forgetting defined in time (:mod:`.forgetting`), adds the swinging feet's ankle F/T rows
(:mod:`.ankle_ft`) and solves physically consistent by constraint (:mod:`.solve`).
"""

from legid_ros.core.identification.online.ankle_ft import FT_SIGMA
from legid_ros.core.identification.online.estimator import ROW_SIGMA, OnlineEstimator
from legid_ros.core.identification.online.forgetting import TimeForgetting

__all__ = ['FT_SIGMA', 'ROW_SIGMA', 'OnlineEstimator', 'TimeForgetting']
