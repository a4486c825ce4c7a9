"""The Trigger client's names and hints (no ROS graph): service names from node names, the
node suggested for a missing service, the error that carries them. The calls against running
nodes are in test_cli_save_reset.py."""

import pytest

from legid_ros.core.errors import BadInputError
from legid_ros.ros.trigger_client import (TRIGGER_TYPE, ServiceNotFoundError,
                                          missing_service_hint, service_name)

TRIGGER = [TRIGGER_TYPE]


@pytest.mark.parametrize('node, expected', [
    ('/estimator', '/estimator/save'),
    ('estimator', '/estimator/save'),
    ('/robot1/estimator/', '/robot1/estimator/save'),
    (' /robot1/estimator ', '/robot1/estimator/save'),
])
def test_service_name_is_fully_qualified(node, expected):
    """A relative, namespaced or slash-ended node name gives the absolute service name."""
    assert service_name(node, 'save') == expected


@pytest.mark.parametrize('node', ['', '/', 'no spaces', '/1robot/estimator', '~/estimator',
                                  '/a//b'])
def test_invalid_node_name_is_refused_naming_it(node):
    """A node name that gives no valid service name raises BadInputError naming it."""
    with pytest.raises(BadInputError, match='--node'):
        service_name(node, 'save')


def test_namespaced_namesake_is_suggested_before_a_close_spelling():
    """/robot1/estimator is suggested for /estimator, over the closer-spelt /estimators."""
    visible = [('/estimators/save', TRIGGER), ('/robot1/estimator/save', TRIGGER),
               ('/robot1/estimator/get_parameters', ['rcl_interfaces/srv/GetParameters'])]
    hint, node = missing_service_hint('/estimator/save', visible)
    assert node == '/robot1/estimator'
    assert hint == ('did you mean --node /robot1/estimator? (visible .../save services: '
                    '/estimators/save, /robot1/estimator/save)')


def test_closest_of_several_namesakes_is_suggested():
    """Among several namespaces, the namesake spelt closest to the request is suggested."""
    visible = [(f'/{ns}/estimator/reset', TRIGGER) for ns in ('left_arm', 'robot2', 'robot1')]
    assert missing_service_hint('/robot3/estimator/reset', visible)[1] in (
        '/robot1/estimator', '/robot2/estimator')
    assert missing_service_hint('/robot1x/estimator/reset', visible)[1] == '/robot1/estimator'


def test_unrelated_service_of_the_same_name_is_listed_not_suggested():
    """/buffer/reset is listed for a missing /estimator/reset but not suggested."""
    hint, node = missing_service_hint('/estimator/reset', [('/buffer/reset', TRIGGER)])
    assert node is None
    assert hint == '(visible .../reset services: /buffer/reset)'


def test_service_of_another_type_is_named_with_its_type():
    """A service of the right name but another type is reported with that type."""
    visible = [('/estimator/save', ['example_interfaces/srv/SetBool'])]
    hint, node = missing_service_hint('/estimator/save', visible)
    assert node is None
    assert hint.startswith('/estimator/save exists but is of type '
                           'example_interfaces/srv/SetBool, not std_srvs/srv/Trigger')
    assert '1 service(s) visible, no Trigger service named .../save' in hint


def test_long_lists_are_cut_and_an_empty_graph_is_said():
    """More than five candidates are cut with a count; no service at all is said so."""
    visible = [(f'/r{k}/estimator/save', TRIGGER) for k in range(8)]
    hint, _ = missing_service_hint('/estimator/save', visible)
    assert hint.endswith('/r4/estimator/save and 3 more)')
    assert missing_service_hint('/estimator/save', []) == (
        'no service at all is visible on this domain', None)


def test_not_found_error_carries_its_data():
    """ServiceNotFoundError keeps the service, timeout, domain, services seen and suggestion."""
    visible = [('/robot1/estimator/save', TRIGGER)]
    exc = ServiceNotFoundError('/estimator/save', 2.5, 17, visible)
    assert (exc.service, exc.timeout_s, exc.domain_id) == ('/estimator/save', 2.5, 17)
    assert exc.visible == [('/robot1/estimator/save', TRIGGER)]
    assert exc.suggestion == '/robot1/estimator'
    assert str(exc).startswith('no service /estimator/save (std_srvs/srv/Trigger) appeared '
                               'within 2.5 s on ROS_DOMAIN_ID 17; did you mean')
