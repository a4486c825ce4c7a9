"""Solvers every identification ends in.

The parameter QP (OSQP, :mod:`.qp`), the two-pass weighted solve of the linear methods
(:mod:`.standard`), projected Newton (:mod:`.newton`, :mod:`.zmp_newton`), LMI-constrained
least squares (cvxpy SDP, :mod:`.sdp`) and the robust three-loop identification
(:mod:`.robust`).
"""
