"""Tests of the accuracy bench's pure parts (legid_ros.bench.accuracy), no physics."""

from legid_ros.bench.accuracy_report import markdown


def test_markdown_lists_every_method_and_check():
    """The report names the command, each method row and each failed check."""
    names = ['lc_a', 'lc_b', 'm_a', 'm_b']
    row = {'zmp_dev_mm': 1.234, 'zmp_dev_p95_mm': 2.0, 'mass_err_pct_max': 4.0,
           'mass_err_pct': {'a': 1.0, 'b': -4.0}, 'com_err_mm_max': 3.0, 'time_s': 0.5,
           'phi_mean': [0.1, 0.2, 1.0, 2.0], 'phi_std': [0.0] * 4, 'notes': []}
    res = {'command': 'legid bench accuracy --quick', 'runs': 2, 'duration_s': 20.0,
           'rate_hz': 200.0, 'validation_seed': 100, 'fell': False, 'real_time_factor': 9.5,
           'step': 4, 'prepare_s_per_run': 1.0, 'total_wall_s': 60.0, 'calibration': None,
           'physics': [{'support_corner_force_min_n': 12.0, 'support_slip_max_m': 1e-4,
                        'support_yaw_slip_max_rad': 1e-4, 'trunk_height_drop_m': 0.02,
                        'swing_force_max_n': 0.0}],
           'reduced_names': names, 'phi_true': [0.1, 0.2, 1.0, 2.0],
           'phi_cad': [0.1, 0.2, 1.1, 2.1], 'methods': {'zmp_qp': row, 'cad': dict(row)},
           'checks': {'stays_up': True, 'zmp_qp_masses_within_3pct': False},
           'info_checks': {}}
    text = markdown(res)
    assert 'legid bench accuracy --quick' in text
    assert '| ZMP QP | 1.23 |' in text
    assert 'zmp_qp_masses_within_3pct: NO' in text
    assert 'smallest support-corner force 12.0 N' in text
