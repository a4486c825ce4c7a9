"""Foot trajectories and gaits: improved cycloid, trot, slope, friction cone.

After the redundant hydraulic quadruped of Chen, Guo, Hou & Wang 2021 (docs/references.md).
"""
