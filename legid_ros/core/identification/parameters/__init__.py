"""Parameterisations of the standard inertial parameters.

The standard set and the ZMP reduced set (:mod:`.sets`, :mod:`.reduced`), base parameters by
QR (:mod:`.base`), homogeneous primitive bodies (:mod:`.primitives`) and the ZMP's invariance
curve within the reduced set (:mod:`.equivalence`).
"""
