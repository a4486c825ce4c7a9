"""The sensor buffer: synced, filtered, differentiated windows of a legged robot's sensors.

:mod:`.sensor_buffer` (the streaming buffer), :mod:`.auxiliary` (adding IMU, foot force and
ankle F/T samples), :mod:`.stream` (time-sorted samples, causal lag), :mod:`.rows` (joint-state
samples to window rows), :mod:`.kinematics` (base pose, contacts, measured ZMP per row),
:mod:`.schema` (settings and window channels) and :mod:`.window` (reading windows back into
named arrays).
"""
