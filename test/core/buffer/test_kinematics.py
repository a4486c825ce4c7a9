"""The buffer's per-row kinematics (``core/buffer/kinematics.py``)."""

import numpy as np
import pinocchio as pin

from legid_ros.core.buffer.kinematics import StreamKinematics
from legid_ros.core.robot import load_robot


def test_joint_placements_of_a_batch_are_each_rows_own():
    """Every row's joint placements equal pinocchio's forward kinematics of that row alone
    (the batch reads them through references that forwardKinematics updates in place)."""
    robot = load_robot('biped')
    kin = StreamKinematics(robot, 'wrench')
    q = np.random.default_rng(3).uniform(-0.5, 0.5, (7, kin.model.nq - 7))
    rot, pos = kin._joint_placements(q)
    data = kin.model.createData()
    for k in range(len(q)):
        full = pin.neutral(kin.model)
        full[7:] = q[k]
        pin.forwardKinematics(kin.model, data, full)
        for j, jid in enumerate(kin._joints):
            np.testing.assert_allclose(rot[k, j], data.oMi[jid].rotation, atol=1e-12)
            np.testing.assert_allclose(pos[k, j], data.oMi[jid].translation, atol=1e-12)
    assert np.ptp(pos[:, 0], axis=0).max() > 1e-3  # the rows differ: no stale copy passes
