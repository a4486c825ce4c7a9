"""legid bench honesty's scoring: z over determined quantities, coverage as bench identify's."""

import numpy as np

from legid_ros.bench.honesty import _per_set


def _score(errs, stds):
    return {'determined': {f'q{i}': {'err': e, 'std': s, 'unit': 'mm'}
                           for i, (e, s) in enumerate(zip(errs, stds))},
            'tight': 0, 'n_determined': len(errs), 'n_quantities': len(errs)}


def test_coverage_is_reported_std_over_the_error_spread():
    """Errors of spread 2 with a reported std of 2 give a coverage of 1; z is |err| / std."""
    rng = np.random.default_rng(0)
    scores = [_score(rng.normal(0, 2.0, 3), [2.0] * 3) for _ in range(400)]
    out = _per_set(scores)
    assert 0.9 < out['std_coverage_ratio'] < 1.1
    z = max(abs(d['err']) / d['std'] for s in scores for d in s['determined'].values())
    assert out['z_max'] == z


def test_overconfident_std_shows_as_low_coverage_and_high_z():
    """A std ten times too small: coverage near 0.1 and z far above 3."""
    rng = np.random.default_rng(1)
    scores = [_score(rng.normal(0, 1.0, 2), [0.1] * 2) for _ in range(50)]
    out = _per_set(scores)
    assert out['std_coverage_ratio'] < 0.15 and out['z_max'] > 3


def test_a_shared_bias_shows_in_the_mean_error():
    """Errors of 5 +- 1 over the seeds: mean error near 5 and RMS near sqrt(26), the mean near
    the RMS (a bias); errors of 0 +- 1: mean near 0."""
    rng = np.random.default_rng(2)
    biased = _per_set([_score(rng.normal(5.0, 1.0, 1), [1.0]) for _ in range(400)])
    assert abs(biased['error_mean_per_quantity']['q0'] - 5.0) < 0.2
    assert abs(biased['error_rms_per_quantity']['q0'] - np.sqrt(26.0)) < 0.2
    fair = _per_set([_score(rng.normal(0.0, 1.0, 1), [1.0]) for _ in range(400)])
    assert abs(fair['error_mean_per_quantity']['q0']) < 0.2


def test_calibrated_range_holds_one_for_equal_stds_and_narrows_with_seeds():
    """Equal stds: the range a calibrated std gives straddles 1 and narrows with more seeds."""
    from legid_ros.bench.honesty import calibrated_range
    few = calibrated_range({'q': [2.0] * 8})
    many = calibrated_range({'q': [2.0] * 200})
    assert few[0] < 1.0 < few[1] and many[0] < 1.0 < many[1]
    assert (many[1] - many[0]) < 0.5 * (few[1] - few[0])


def test_calibrated_range_widens_when_one_seed_has_a_large_std():
    """One seed's std 50x the others': whether that seed's error is large decides the ratio,
    so a calibrated std's range spans more than a factor of 10 (equal stds: about 2.4)."""
    from legid_ros.bench.honesty import calibrated_range
    lo, hi = calibrated_range({'q': [5.0] + [0.1] * 7})
    elo, ehi = calibrated_range({'q': [0.1] * 8})
    assert hi / lo > 10.0 and ehi / elo < 3.0


def test_z_rms_and_blocks_are_reported_per_set():
    """z_rms is the RMS of error / std (1 for errors drawn with the std); blocks per seed kept."""
    rng = np.random.default_rng(3)
    scores = []
    for _ in range(300):
        s = _score(rng.normal(0, 2.0, 2), [2.0] * 2)
        s['n_blocks'] = 30
        scores.append(s)
    out = _per_set(scores)
    assert 0.9 < out['z_rms'] < 1.1
    assert out['n_blocks_per_seed'] == [30] * 300
    lo, hi = out['coverage_if_calibrated_5_95']
    assert lo < out['std_coverage_ratio'] < hi


def test_beside_pairs_are_scored_apart_from_the_figures(tmp_path, monkeypatch):
    """A ``method:set`` pair under --beside is identified by that method and scored under
    ``beside``, not in z_max or the coverage figures; its failure does not fail the run."""
    import argparse

    from legid_ros.bench import honesty

    calls = []

    def fake_run(name, seed, args):
        return 'robot', 'rec', np.zeros(1), {}

    def fake_identify(robot, rec, pset, prep):
        calls.append(pset)
        if pset == 'floating_qp:grouped_sides':
            raise RuntimeError('no efforts')
        return type('R', (), {'physical': object(), 'info': {}})()

    monkeypatch.setattr(honesty, '_run', fake_run)
    monkeypatch.setattr(honesty, '_identify', fake_identify)
    monkeypatch.setattr(honesty, '_zmp_offset', lambda *a: [0.0, 0.0])
    monkeypatch.setattr(honesty, '_score', lambda robot, res, pi: _score([1.0], [1.0]))
    monkeypatch.setattr(honesty, '_cli_checks', lambda tmp: {
        'negative_mass_urdfs_written': 0, 'prerequisite_failures_after_bag_read': 0,
        'cases': {}})
    parser = argparse.ArgumentParser()
    honesty.add_arguments(parser)
    args = parser.parse_args(['--robots', 'biped', '--sets', 'grouped', '--seeds', '3'])
    args.out = str(tmp_path)
    out = honesty.run(args)
    assert calls.count('floating_qp:grouped_sides') == 3 and calls.count('grouped') == 3
    assert list(out['per_robot']['biped']) == ['grouped']
    assert out['beside']['per_robot']['biped'] == {} and len(out['beside']['errors']) == 3
    assert out['errors'] == [] and out['z_max'] == 1.0
