"""Identification of a geared fixed-base leg (seeds 001 and 003).

Entry points: :func:`leg_context`, :func:`identify_two_step`, :func:`identify_unified`
(:func:`unified_cv`, :func:`unified_stribeck`), :func:`robust_identify`,
:func:`f_test_reduction`, and the synthetic experiment in
:mod:`legid_ros.core.leg_ident.experiment`. Results are :class:`LegIdentResult`.
"""

from legid_ros.core.leg_ident.ftest import FTestResult, f_test_reduction
from legid_ros.core.leg_ident.identify import (LegContext, identify_two_step, identify_unified,
                                               leg_context, relative_rms, rigid_error,
                                               unified_cv, unified_stribeck)
from legid_ros.core.leg_ident.result import LegIdentResult
from legid_ros.core.leg_ident.robust import RobustSettings, robust_identify

__all__ = ['FTestResult', 'LegContext', 'LegIdentResult', 'RobustSettings',
           'f_test_reduction', 'identify_two_step', 'identify_unified', 'leg_context',
           'relative_rms', 'rigid_error', 'robust_identify', 'unified_cv', 'unified_stribeck']
