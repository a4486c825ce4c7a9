"""Model-based feedforward and the PD + feedforward joint controller.

After the two-step identification and feedforward of a geared leg (Xiao, Qian & Luo 2025).

``tau_ff = (J_rotor + M(q)) qdd_d + C(q, qd_d) qd_d + G(q) + tau_f(qd_d)``, with the rigid-body
terms from pinocchio's RNEA on any standard inertial parameter set, ``J_rotor`` the reflected
rotor inertia per joint (``gear_ratio^2 * rotor_inertia`` on the joint side [kg.m^2]) and
``tau_f`` any friction model. The controller adds a PD on the tracking error:
``tau = tau_ff + Kp (q_d - q) + Kd (qd_d - qd)`` and clamps it to the URDF effort limits,
counting every clamp in its diagnostics.

For a floating-base robot with feet, :class:`FloatingFeedforward` evaluates the whole body's
inverse dynamics with the base state from the stance feet and the contact wrenches measured
or distributed by a small QP (:mod:`legid_ros.core.feedforward.contact_qp`).
"""

from legid_ros.core.feedforward.controller import (GEARED_LEG_KD, GEARED_LEG_KP,
                                                   ControllerDiagnostics, ControlOutput,
                                                   PdFeedforwardController, PdGains,
                                                   default_gains)
from legid_ros.core.feedforward.contact_qp import (ContactQp, ContactSolution, SoleContact,
                                                   build_contact_qp)
from legid_ros.core.feedforward.fast_friction import compile_friction
from legid_ros.core.feedforward.floating import (FloatingFeedforward, FloatingTerms,
                                                 floating_from_identification, sole_contacts)
from legid_ros.core.feedforward.model import (FeedforwardModel, FeedforwardTerms, as_friction,
                                              from_identification, reflected_rotor_inertia)
from legid_ros.core.feedforward.reference import ReferenceTrajectory

__all__ = ['GEARED_LEG_KD', 'GEARED_LEG_KP', 'ContactQp', 'ContactSolution', 'ControlOutput',
           'ControllerDiagnostics', 'FeedforwardModel', 'FeedforwardTerms',
           'FloatingFeedforward', 'FloatingTerms', 'SoleContact', 'build_contact_qp',
           'floating_from_identification', 'sole_contacts', 'PdFeedforwardController', 'PdGains',
           'ReferenceTrajectory', 'as_friction', 'compile_friction', 'default_gains',
           'from_identification', 'reflected_rotor_inertia']
