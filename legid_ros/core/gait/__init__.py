"""Foot trajectories and gaits (seed 004): improved cycloid, trot, slope, friction cone."""
