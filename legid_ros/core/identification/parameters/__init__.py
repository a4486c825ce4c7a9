"""Parameterisations of the standard inertial parameters.

- :mod:`.sets`: ``pi = pi(x)`` maps (standard set, the ZMP reduced set, point masses);
- :mod:`.grouped`: mass and 3-D COM per link group, symmetric or per side (inertia held);
- :mod:`.reduced`: the ZMP reduced set of Wu & Gao 2021 (mass and axial COM per link group);
- :mod:`.base`: base parameters by QR with column pivoting, for floating-base rows and the
  fixed-base geared leg alike;
- :mod:`.primitives`: homogeneous primitive bodies (Tencent patent application 2022);
- :mod:`.equivalence`: the curve of the ZMP reduced set along which the ZMP does not change.
"""
