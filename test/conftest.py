"""Test-session settings shared by every test.

ROS 2 traffic stays on this machine (localhost discovery) and on a domain of its own, so test
runs in parallel (or a robot on the network) never see each other: the domain id is taken
with an exclusive lock file held for the whole session (legid_ros.ros_domain), so two test
sessions at the same time never share one; the node processes a test starts inherit it.
The ROS wheels re-execute the interpreter at start-up, before this file runs.
"""

import os

from legid_ros.ros_domain import process_domain

os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
os.environ.setdefault('ROS_LOCALHOST_ONLY', '1')
# always a private id, even if the shell sets one (often 0, shared with everything else)
os.environ['ROS_DOMAIN_ID'] = str(process_domain())
os.environ.setdefault('MPLBACKEND', 'Agg')
# One BLAS thread per process: on 2 cores, OpenBLAS threads fighting each other made small
# QR and least-squares calls up to 100x slower.
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
os.environ.setdefault('OMP_NUM_THREADS', '1')


# ---- robots we did not design (example-robot-data), simulated from their description ----

import pytest  # noqa: E402

from legid_ros.core import paths  # noqa: E402
from legid_ros.core.robot import load_robot  # noqa: E402


def _robot(name):
    try:
        return load_robot(paths.share_dir() / 'config' / 'robots' / f'{name}.yaml')
    except Exception as exc:  # example-robot-data missing
        pytest.skip(f'{name}: {exc}')


@pytest.fixture(scope='session')
def solo12():
    """The point-foot quadruped."""
    return _robot('solo12')


@pytest.fixture(scope='session')
def g1():
    """Unitree G1 (example-robot-data), waist and arms locked (config/robots/g1.yaml)."""
    return _robot('g1')


@pytest.fixture(scope='session')
def talos():
    """The humanoid, upper body locked."""
    return _robot('talos')


@pytest.fixture(scope='session')
def solo12_run(solo12):
    """45 s of Solo12's standing excitation in MuJoCo, out-of-model truth, default noise."""
    from legid_ros.core.sim.described import perturbed_truth, simulate_described
    pi, _ = perturbed_truth(solo12, seed=1)
    return simulate_described(solo12, pi, duration_s=45.0, seed=1)


@pytest.fixture(scope='session')
def talos_run(talos):
    """25 s of Talos's standing excitation in MuJoCo, out-of-model truth, default noise."""
    from legid_ros.core.sim.described import perturbed_truth, simulate_described
    pi, _ = perturbed_truth(talos, seed=1)
    return simulate_described(talos, pi, duration_s=25.0, seed=1)


@pytest.fixture(scope='session')
def mjcf_of(tmp_path_factory):
    """URDF -> the MJCF MuJoCo's own URDF importer writes of it (fixed links kept as bodies,
    ``package://`` resolved): a model from outside the code under test."""
    import re

    import mujoco

    from legid_ros.core.description.resources import resolve_uri

    def convert(urdf):
        text = re.sub(r'filename="(package://[^"]+)"',
                      lambda m: f'filename="{resolve_uri(m.group(1), urdf.parent)}"',
                      urdf.read_text())
        text = re.sub(r'(<robot[^>]*>)', r'\1<mujoco><compiler fusestatic="false" '
                      r'discardvisual="true" strippath="false"/></mujoco>', text, count=1)
        root = tmp_path_factory.mktemp('mjcf')
        (root / urdf.name).write_text(text)
        model = mujoco.MjModel.from_xml_path(str(root / urdf.name))
        out = root / f'{urdf.stem}.xml'
        mujoco.mj_saveLastXML(str(out), model)
        return out

    return convert
