"""Tests of legid_ros.bench.conventions_variants: the setups the conventions bench records."""

import yaml

from legid_ros.bench.conventions_variants import (ISSUE_VARIANTS, humanoid_variants,
                                                  solo_variants)
from legid_ros.core.robot import load_robot


def test_every_issue_convention_is_covered_by_variants_that_exist(solo12, talos):
    """Each of issue 24's twelve conventions names variants the bench records, on at least
    one robot, and every variant covers one of them but two extras (every convention at once;
    a tilted IMU mounting with a heading and world-axes forces)."""
    variants = {'solo12': solo_variants({f: x.link for f, x in solo12.feet.items()}),
                'talos': humanoid_variants({f: x.link for f, x in talos.feet.items()})}
    assert len(ISSUE_VARIANTS) == 12
    used = {r: set() for r in variants}
    for issue, by_robot in ISSUE_VARIANTS.items():
        assert by_robot, issue
        for robot, names in by_robot.items():
            assert set(names) <= set(variants[robot]), (issue, robot)
            used[robot] |= set(names)
    for robot, specs in variants.items():
        assert set(specs) - used[robot] == {'combined', 'imu_rotated_yawed_world_forces'}


def test_each_setup_s_description_loads(solo12, talos, tmp_path):
    """Every variant's setup description (its readout's keys) loads as a robot whose joint
    names are the ones its bag gives."""
    for robot, specs in ((solo12, solo_variants({f: x.link for f, x in solo12.feet.items()})),
                         (talos, humanoid_variants({f: x.link for f, x in talos.feet.items()}))):
        for name, spec in specs.items():
            desc = spec.readout.description(robot)
            desc['urdf'] = str(robot.urdf_path)
            path = tmp_path / f'{robot.name}_{name}.yaml'
            path.write_text(yaml.safe_dump(desc))
            setup = load_robot(str(path))
            assert setup.actuated_joint_names == [spec.readout.joint_name(j)
                                                  for j in robot.actuated_joint_names], name
