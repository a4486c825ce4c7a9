"""Tests of legid_ros.core.description.model_file: URDF or MJCF, one loader for both."""

import pinocchio as pin
import pytest

from legid_ros.core import paths
from legid_ros.core.description.model_file import is_mjcf, load_model
from legid_ros.core.errors import RobotDescriptionError

TALOS = 'talos_data/robots/talos_reduced_box.urdf'


def _com(model):
    return pin.centerOfMass(model, model.createData(), pin.neutral(model))


def test_is_mjcf_reads_the_root_element(mjcf_of, tmp_path):
    """A MuJoCo XML is an MJCF, a URDF is not, whatever the file suffix."""
    mjcf = mjcf_of(paths.urdf_path('biped.urdf'))
    renamed = tmp_path / 'biped.urdf'
    renamed.write_text(mjcf.read_text())
    assert is_mjcf(mjcf) and is_mjcf(renamed)
    assert not is_mjcf(paths.urdf_path('biped.urdf'))


def test_unreadable_model_file_is_a_description_error(tmp_path):
    """A file that is not XML raises RobotDescriptionError naming it."""
    bad = tmp_path / 'robot.xml'
    bad.write_text('not xml <')
    with pytest.raises(RobotDescriptionError, match='robot.xml'):
        load_model(bad, True)


@pytest.mark.parametrize('floating', [True, False])
def test_mjcf_of_talos_loads_like_its_urdf(erd, mjcf_of, floating):
    """Talos from MuJoCo's MJCF of its URDF: the same joints (MuJoCo orders the tree its
    own way), per-joint masses to MuJoCo's 6 printed digits, same whole-body COM to 0.1 mm."""
    urdf = load_model(erd / TALOS, floating)
    mjcf = load_model(mjcf_of(erd / TALOS), floating)
    assert sorted(mjcf.names) == sorted(urdf.names) and len(urdf.names) == 34 - (not floating)
    assert (mjcf.names[1] == 'root_joint') == floating
    for name in urdf.names[1:]:
        assert mjcf.inertias[mjcf.getJointId(name)].mass == pytest.approx(
            urdf.inertias[urdf.getJointId(name)].mass, abs=2e-5)
    assert _com(mjcf) == pytest.approx(_com(urdf), abs=1e-4)


def test_free_joint_of_an_mjcf_is_the_floating_base(mjcf_of, tmp_path):
    """An MJCF whose root body has a <freejoint/>: floating, it is the one root_joint (nq 19
    for the biped's 12 joints); fixed, it is dropped (nq 12)."""
    text = mjcf_of(paths.urdf_path('biped.urdf')).read_text()
    free = tmp_path / 'biped_free.xml'
    free.write_text(text.replace('<body name="trunk">', '<body name="trunk"><freejoint/>', 1))
    floating = load_model(free, True)
    fixed = load_model(free, False)
    assert floating.nq == 19 and floating.names[1] == 'root_joint'
    assert floating.joints[1].shortname() == 'JointModelFreeFlyer'
    assert fixed.nq == 12 and fixed.names[1] == 'l_hip_yaw'
