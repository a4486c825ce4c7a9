"""Sensor conventions: how a recording's streams are named, framed and expressed.

- :mod:`~legid_ros.core.conventions.spec`: the description keys of each stream (IMU topic,
  frame, mounting rotation and heading; per foot the frame its forces are expressed in and
  the header frame id the bag gives them).
- :mod:`~legid_ros.core.conventions.convert`: the one place a recording read from a bag is
  brought to the internal convention of :class:`legid_ros.core.recording.Recording` (IMU in
  the ``imu_frame`` axes, heading-free world; every foot wrench in its F/T frame's axes).
- :mod:`~legid_ros.core.conventions.sensing`: which force sensing identification uses
  (``zmp_source``), decided once for ``legid identify`` and ``legid check``.
- :mod:`~legid_ros.core.conventions.stamps`: whether a stream's header stamps come from the
  joint states' clock (one rule for the bag reader, ``legid check`` and the live buffer).
- :mod:`~legid_ros.core.conventions.consistency`: the physical checks of ``legid check`` on
  the recording as identification reads it (weight, sign and axes of the forces, IMU
  mounting and heading, swapped feet, sole-sensor positions).
"""
