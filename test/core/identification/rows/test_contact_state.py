"""Tests of legid_ros.core.identification.rows.contact_state (base state from stance contacts)."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.core.identification.rows.contact_state import contact_base_state


def test_base_twist_of_a_quadruped_on_point_feet_matches_mujoco(solo12, solo12_run):
    """From the joint states, the feet in stance and the IMU, the base twist equals MuJoCo's
    free-joint twist (exact joint rates given; mm/s)."""
    rec = solo12_run
    k = np.arange(400, rec.n - 400, 50)
    loaded = np.stack([np.linalg.norm(rec.foot_wrench[f][k, :3], axis=1) > 1.0
                       for f in solo12.feet], axis=1)
    st = contact_base_state(solo12, rec.q[k], rec.qd[k], rec.qdd_true[k], loaded,
                            rec.imu_quat[k], rec.imu_gyro[k])
    err = np.abs(st['v'][:, :6] - rec.base_vel_true[k])
    assert err[:, :3].mean() < 3e-3 and err[:, 3:].mean() < 3e-2


def test_no_stance_foot_gives_nan_and_bad_shapes_are_refused(solo12, solo12_run):
    """A sample without stance feet has no base state; a wrong stance shape is refused."""
    rec = solo12_run
    stance = np.zeros((2, 4), bool)
    st = contact_base_state(solo12, rec.q[:2], rec.qd[:2], rec.qdd_true[:2], stance,
                            rec.imu_quat[:2])
    assert np.isnan(st['q']).all()
    with pytest.raises(BadInputError):
        contact_base_state(solo12, rec.q[:2], rec.qd[:2], rec.qdd_true[:2], stance[:, :3],
                           rec.imu_quat[:2])
