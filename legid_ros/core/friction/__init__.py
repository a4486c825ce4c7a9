"""Joint friction: models, fitting, constant-speed sweep protocol.

Piecewise and sweep after Xiao, Qian & Luo 2025; exponential-viscous after Zhu & Zhang.
"""

from legid_ros.core.friction.models import (AsymmetricCoulombViscous, CoulombViscous,
                                            ExponentialViscous, FrictionModel, JointFriction,
                                            Piecewise, Stribeck, model_from_dict, smooth_sign)

__all__ = ['AsymmetricCoulombViscous', 'CoulombViscous', 'ExponentialViscous', 'FrictionModel',
           'JointFriction', 'Piecewise', 'Stribeck', 'model_from_dict', 'smooth_sign']
