"""Exact synthetic data of the biped doing seed 000's excitation (no ROS).

``simulate_biped(config)`` returns a :class:`legid_ros.core.recording.Recording` with every
sensor of the biped plus ground truth; ``perturbed_truth(robot, table)`` builds the 'true'
parameters from the CAD ones.
"""

from legid_ros.core.synthetic.biped import simulate_biped
from legid_ros.core.synthetic.config import (SEED000_TRUTH, FrictionModel, NoiseModel,
                                             SyntheticConfig)
from legid_ros.core.synthetic.truth import perturbed_truth

__all__ = ['SEED000_TRUTH', 'FrictionModel', 'NoiseModel', 'SyntheticConfig', 'perturbed_truth',
           'simulate_biped']
