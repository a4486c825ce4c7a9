"""Joint friction: models (seeds 001, 003), fitting, constant-speed sweep protocol."""

from legid_ros.core.friction.models import (AsymmetricCoulombViscous, CoulombViscous,
                                            ExponentialViscous, FrictionModel, JointFriction,
                                            Piecewise, Stribeck, model_from_dict, smooth_sign)

__all__ = ['AsymmetricCoulombViscous', 'CoulombViscous', 'ExponentialViscous', 'FrictionModel',
           'JointFriction', 'Piecewise', 'Stribeck', 'model_from_dict', 'smooth_sign']
