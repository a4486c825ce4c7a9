"""Tests of legid_ros.core.description.from_bag: a description mapped onto a bag's names."""

from legid_ros.core.description.from_bag import joint_key, map_joint_names

URDF = ['FL_HAA', 'FL_HFE', 'FL_KFE', 'HR_KFE']


def test_joint_key_drops_namespace_case_joint_affix_and_separators():
    """Names that differ only by namespace, case, a joint affix or separators share a key."""
    assert joint_key('solo/fl_haa_joint') == joint_key('FL_HAA') == 'flhaa'
    assert joint_key('joint-FL-HAA') == 'flhaa'
    assert joint_key('robot/leg_left_1_joint_joint') == joint_key('leg_left_1_joint')
    assert joint_key('FL_HFE') != joint_key('FL_HAA')


def test_bag_names_matching_the_urdf_s_are_mapped():
    """Each bag name matching one model joint is mapped to it, with one warning to check."""
    desc = {}
    bag = [f'solo/{j.lower()}_joint' for j in URDF]
    warnings = map_joint_names(desc, set(URDF), bag, {})
    assert desc['joint_name_map'] == {f'solo/{j.lower()}_joint': j for j in URDF}
    assert len(warnings) == 1 and 'matched by name' in warnings[0]


def test_given_pairs_map_names_no_match_finds_and_the_rest_is_reported():
    """--joint-map pairs map names a match cannot; a joint neither maps is reported, and a
    pair naming a joint the bag lacks is a warning; matching names need no map."""
    desc = {}
    bag = ['FL_HAA', 'FL_HFE', 'front_left_knee', 'x']
    warnings = map_joint_names(desc, set(URDF), bag, {'front_left_knee': 'FL_KFE',
                                                      'gone': 'HR_KFE'})
    assert desc['joint_name_map'] == {'front_left_knee': 'FL_KFE'}
    assert any("'gone' is not in /joint_states" in w for w in warnings)
    assert any(w.startswith('joints HR_KFE are not in /joint_states') for w in warnings)
    same = {}
    assert map_joint_names(same, set(URDF), list(URDF), {}) == [] and same == {}
