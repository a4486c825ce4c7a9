"""The buffer converts a setup's sensor conventions as the offline path does (issue 24)."""

import pytest

from convention_readouts import READOUTS, assert_same_windows, make_setups, rows


@pytest.fixture(scope='module')
def setups(solo12, solo12_run, tmp_path_factory):
    """Canonical robot and run, and per readout (robot of that setup, its raw readout)."""
    return make_setups(solo12, solo12_run, tmp_path_factory.mktemp('buffer_conv'))


@pytest.mark.parametrize('name', list(READOUTS))
def test_a_setup_s_streams_give_the_canonical_windows(setups, name):
    """The buffer fed a setup's raw readout (IMU on another topic, mounted rotated with a
    yawed reference; forces in world or foot axes) with that setup's description cuts the
    canonical recording's windows: q, IMU and contacts exactly, F/T-axes wrenches exactly or,
    from world axes, within the IMU tilt error's rotation of each wrench (theta |f|), and the
    measured CoP within what those force errors can move it."""
    canon, run, variants = setups
    robot, raw = variants[name]
    assert_same_windows(rows(raw, robot, conventions=True), rows(run, canon, conventions=False),
                        run, canon, READOUTS[name].force_expressed_in == 'world')


def test_without_conversion_the_windows_differ(setups):
    """The check has teeth: the same readout taken as canonical gives other IMU channels."""
    canon, run, variants = setups
    robot, raw = variants['imu_world']
    with pytest.raises(AssertionError):
        assert_same_windows(rows(raw, robot, conventions=False),
                            rows(run, canon, conventions=False), run, canon, True)
