"""The total mass from the vertical force, with the mean COM acceleration of the samples kept."""

import numpy as np

from legid_ros.core.identification.prepare import PrepareOptions, prepare
from legid_ros.core.identification.rows.linear import total_mass_from_forces
from legid_ros.core.robot import load_robot
from legid_ros.core.synthetic import FrictionModel, NoiseModel, SyntheticConfig, simulate_biped
from legid_ros.core.synthetic.truth import truth_table


def test_total_mass_counts_the_kept_samples_mean_com_acceleration():
    """Samples with the COM accelerating up weigh the robot right once that mean is counted."""
    robot = load_robot('biped')
    rec = simulate_biped(SyntheticConfig(duration_s=20.0, rate_hz=50.0, seed=2,
                                         noise=NoiseModel.none(), friction=FrictionModel.none(),
                                         truth=truth_table('table2')))
    samples = prepare(rec, robot, PrepareOptions(diff='exact', base='true', zmp_source='true',
                                                 cutoff_hz=None))
    up = samples.take(np.flatnonzero(samples.fz > np.median(samples.fz)))
    mass = rec.meta['total_mass_true_kg']
    plain = total_mass_from_forces(up)
    kept = total_mass_from_forces(up, robot)
    assert abs(plain - mass) > 5 * abs(kept - mass)
    assert abs(kept - mass) < 5e-4 * mass
