"""The described run's servo damping cap: kv dt at most the given share of each joint's inertia."""

import numpy as np

from legid_ros.core.robot import load_robot
from legid_ros.core.sim.described.excitation import _stand_pose
from legid_ros.core.sim.described.run import DescribedRun, joint_inertia


def test_kv_cap_bounds_damping_by_joint_inertia():
    """Capped: every joint's kv dt <= ratio (I + armature), never above the per-kg damping."""
    robot = load_robot('biped')
    q, _, _ = _stand_pose(robot, 0.12)
    inertia = joint_inertia(robot, q)
    assert set(inertia) == set(robot.actuated_joint_names)
    assert all(v > 0 for v in inertia.values())
    run = DescribedRun(kv_dt_inertia_max=0.5)
    mass = robot.total_mass
    opt = run.options(mass, inertia)
    arm = run.armature_per_kg * mass
    for name, i in inertia.items():
        assert opt.kv[name] * opt.timestep_s <= 0.5 * (i + arm) + 1e-12
        assert opt.kv[name] <= run.kv_per_kg * mass + 1e-12
    assert min(opt.kv.values()) < run.kv_per_kg * mass  # the ankles are capped


def test_kv_uncapped_by_default():
    """Default settings: one damping per kg, whatever the inertias."""
    opt = DescribedRun().options(10.0, {'a': 1e-6})
    assert np.isclose(opt.kv, DescribedRun().kv_per_kg * 10.0)
