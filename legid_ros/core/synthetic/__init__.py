"""Exact synthetic data of the biped doing the ZMP-identification excitation (no ROS).

The excitation and the truth table follow Wu & Gao 2021 (docs/references.md).

``simulate_biped(config)`` returns a :class:`legid_ros.core.recording.Recording` with every
sensor of the biped plus ground truth; ``perturbed_truth(robot, table)`` builds the 'true'
parameters from the CAD ones; ``truth_table('out_of_model' | 'table2')`` names the two truths
the benchmarks use.
"""

from legid_ros.core.synthetic.biped import simulate_biped
from legid_ros.core.synthetic.config import (TABLE2_TRUTH, FrictionModel, NoiseModel,
                                             SyntheticConfig)
from legid_ros.core.synthetic.truth import (OUT_OF_MODEL_TRUTH, TRUTHS, LinkChange, Payload,
                                            perturbed_truth, truth_table)

__all__ = ['OUT_OF_MODEL_TRUTH', 'TABLE2_TRUTH', 'TRUTHS', 'FrictionModel', 'LinkChange',
           'NoiseModel', 'Payload', 'SyntheticConfig', 'perturbed_truth', 'simulate_biped',
           'truth_table']
