"""What each sample contributes to identification: rows linear in the inertial parameters.

- :mod:`.regressors`: floating-base state from the support foot, the whole-body wrench,
  joint-torque and floating-base regressors, the linear ZMP rows (Wu & Gao 2021, rebuilt) and
  the viscous + Coulomb friction columns of the floating-base rows;
- :mod:`.zmp`: the model ZMP and its derivatives, the ZMP cost of Wu & Gao 2021;
- :mod:`.linear`: stacked rows of each kind (ZMP, joint torque, floating base as in the
  Tencent patent application 2022), their sufficient statistics and group weights;
- :mod:`.foot_ft`: foot F/T rows of a swinging foot (the foot weighed by its ankle sensor);
- :mod:`.drive`: the fixed-base geared leg's rows, rigid body + rotor inertia + friction
  columns (Xiao, Qian & Luo 2025).
"""
