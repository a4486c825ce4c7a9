"""Redundant-leg inverse kinematics: leg model, extended Jacobian, gradient projection.

The extended-Jacobian IK of a redundant hydraulic quadruped leg (Chen, Guo, Hou & Wang 2021,
docs/references.md), for any robot whose description lists such legs (``legs:``; the built-in
quadruped by default).

No ROS imports here; the ik node in ``legid_ros/ros/ik_node.py`` adapts messages to these
functions.
"""

from legid_ros.core.ik.ejm import (TASKS, DifferentialResult, IkSolution, det_extended,
                                   extended_jacobian, joint_velocities, solve_closed_form,
                                   solve_differential, solve_point, task_value)
from legid_ros.core.ik.gpm import damped_pinv, solve_gpm
from legid_ros.core.ik.leg import (LEGS, LegGeometry, LegKinematics, from_leg_plane, gait_role,
                                   leg_names, planar_fk, planar_jacobian, to_leg_plane)

__all__ = ['TASKS', 'LEGS', 'DifferentialResult', 'IkSolution', 'LegGeometry', 'LegKinematics',
           'damped_pinv', 'det_extended', 'extended_jacobian', 'from_leg_plane', 'gait_role',
           'joint_velocities', 'leg_names', 'planar_fk', 'planar_jacobian', 'solve_closed_form',
           'solve_differential', 'solve_gpm', 'solve_point', 'task_value', 'to_leg_plane']
