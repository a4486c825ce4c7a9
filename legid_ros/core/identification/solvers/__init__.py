"""Solvers every identification ends in.

- :mod:`.qp`: the parameter QP (OSQP) and the projection on the mass plane and box;
- :mod:`.standard`: the two-pass weighted solve of the linear methods, and plain LS on base
  parameters;
- :mod:`.newton`, :mod:`.zmp_newton`: bound-constrained Newton (KKT stopping test, explicit
  status) and the ZMP method of Wu & Gao 2021; :mod:`.box_qp`: its exact step on the mass
  plane and the box (primal active set);
- :mod:`.sdp`: the pseudo-inertia LMI SDP (cvxpy), one builder and one solve for the
  floating-base robots and the fixed-base geared leg (Xiao, Qian & Luo 2025);
- :mod:`.robust`: the robust three-loop identification of Zhu & Zhang on the geared leg;
- :mod:`.least_squares`: least squares and condition number through the normal equations.
"""
