"""Standard deviations of an identified set: per core parameter and per identifiable combination.

The relative standard deviations of Zhu & Zhang (``s^2 (A^T A)^-1``, see
:mod:`legid_ros.core.identification.identifiability`) assume white, equal-variance residuals.
The rows of a floating-base run are neither: the ZMP and efforts are filtered (neighbouring
samples share their noise) and part of the residual is model error that follows the motion.
So the covariance here is the sandwich form ``B^-1 M B^-1`` with ``B = G^T G`` (the information
of the rows about the core, linearised at the estimate) and ``M = sum_b (G_b^T r_b)(G_b^T r_b)^T``
over contiguous blocks ``b`` of samples (a batch-means estimate of the score's covariance: it
holds for correlated and unequal residuals as long as a block is longer than their correlation).

It is computed on the *core* of :mod:`legid_ros.core.identification.identifiability` (the ZMP
reduced set of Wu & Gao 2021 for a robot with link groups: axial COM and mass per group, or the
grouped set the method fitted: 3-D COM and mass per group or group side; else every link's mass
and first moment), in the plane the data must decide (total-mass equality and held parameters
removed; a standard-set fit's on every standard parameter, read in the reduced core:
:mod:`.projected`). With no more blocks than directions in the plane, ``M`` is ``B`` times the
blocks' mean inflation ``tr(B^-1 M) / dim``. Combinations are the eigen-directions of ``B``;
one is *identifiable* when its data-only standard deviation is at most ``poor_spread``
core-scale units (the excitation report's 'ok'); ``std_data`` is ``inf`` along a direction the
data has no information about.

The reported ``std`` is that of the estimate's *error*, not of its spread alone: for a
regularised estimate the error along what the data do not determine is the prior's pull
toward CAD, so it counts the prior's bias (the truth within ``prior_width`` scale units of
CAD; the pull by the offset from CAD the determined combinations show, at most that width:
:func:`model_error.offset_width`), the parameters the set holds at CAD and model error
the residual does not show (:mod:`legid_ros.core.identification.model_error`);
``std_along(v, noise_only=True)`` keeps
the spread over noise alone. :mod:`legid_ros.core.identification.summary` turns it into the
physical quantities the data determine.
"""

from __future__ import annotations

from legid_ros.core.identification.model_error import effective_samples
from legid_ros.core.identification.uncertainty.batch import core_uncertainty
from legid_ros.core.identification.uncertainty.core import (DEFAULT_BLOCKS, DETERMINED_RATIO,
                                                            POOR_SPREAD, PRIOR_WIDTH,
                                                            UNMODELLED_WIDTH)
from legid_ros.core.identification.uncertainty.normal import normal_uncertainty
from legid_ros.core.identification.uncertainty.result import Uncertainty

__all__ = ['Uncertainty', 'core_uncertainty', 'normal_uncertainty', 'effective_samples',
           'DEFAULT_BLOCKS', 'DETERMINED_RATIO', 'POOR_SPREAD', 'PRIOR_WIDTH',
           'UNMODELLED_WIDTH']
