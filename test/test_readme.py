"""The README's node parameter tables against the parameters the nodes declare."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _table(section: str) -> dict:
    """``{name: default text}`` of the README table under ``### <section>``."""
    text = (ROOT / 'README.md').read_text()
    body = text.split(f'### {section}\n', 1)[1].split('\n#', 1)[0]
    rows = re.findall(r'^\| `([a-z_0-9]+)` \| ([^|]*) \|', body, flags=re.M)
    return {name: default.strip() for name, default in rows}


def _declared(node: str):
    if node == 'buffer':
        from legid_ros.ros.buffer_node import PARAMETERS
    elif node == 'estimator':
        from legid_ros.ros.estimator_parameters import PARAMETERS
    else:
        from legid_ros.ros.ik_node import PARAMETERS
    return PARAMETERS


@pytest.mark.parametrize('node', ['buffer', 'estimator', 'ik'])
def test_every_declared_parameter_is_in_the_readme_with_its_default(node):
    """Each declared parameter of the node has a README row whose default is the declared one
    (numbers compared as numbers, strings with or without quotes), and no row names a
    parameter the node does not declare."""
    table = _table(f'{node} parameters')
    declared = {p.name: p.default for p in _declared(node)}
    assert set(declared) - set(table) == set(), 'declared but not in the README'
    assert set(table) - set(declared) == set(), 'in the README but not declared'
    for name, default in declared.items():
        shown = table[name].strip('`').strip("'")
        if isinstance(default, bool):
            assert shown.lower() == str(default).lower(), name
        elif isinstance(default, (int, float)):
            assert float(shown.split()[0]) == pytest.approx(float(default), rel=1e-4), name
        else:
            assert shown == str(default).strip("'"), name
