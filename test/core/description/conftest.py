"""Shared fixtures of the description tests: the example-robot-data URDFs."""

import pytest

from legid_ros.core.description.resources import package_dir


@pytest.fixture(scope='session')
def erd():
    """Directory of example-robot-data's robots (pinned in requirements.txt)."""
    root = package_dir('example-robot-data')
    if root is None:
        pytest.skip('example-robot-data is not installed')
    return root / 'robots'
