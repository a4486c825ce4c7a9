"""Tests of legid_ros.bench.excitation_locomotion (the runs' physics settings)."""

import numpy as np
import pinocchio as pin

from legid_ros.bench.excitation_locomotion import SETTINGS
from legid_ros.core.sim.described import DescribedRun
from legid_ros.core.sim.described.excitation import _stand_pose


def test_trot_servo_damping_is_resolved_by_the_physics_step(solo12):
    """On the trot's settings every Solo12 joint's servo damping times the 1 ms step stays
    under half its joint-space inertia (armature included) at the trot's stance, so MuJoCo's
    implicit step does not carry the damping in place of the inertia (default: 4.2 times the
    knees' inertia, stance feet creeping 2-4 cm/s)."""
    settings = DescribedRun(**SETTINGS['trot'])
    opt = settings.options(solo12.total_mass)
    q, _, _ = _stand_pose(solo12, 0.12)
    inertia = np.diag(pin.crba(solo12.model, solo12.model.createData(), q))[6:] + opt.armature
    assert np.max(opt.kv * opt.timestep_s / inertia) < 0.5


def test_every_run_s_data_preparation_is_prepare_s():
    """Every run's data preparation names :class:`PrepareOptions` fields (what ``identify``
    hands to ``prepare``), and the trot keeps only its four-foot rows."""
    import dataclasses

    from legid_ros.bench.excitation_locomotion import RUNS
    from legid_ros.core.identification.prepare import PrepareOptions
    names = {f.name for f in dataclasses.fields(PrepareOptions)}
    for _, _, prep in RUNS.values():
        assert set(prep) <= names
        PrepareOptions(**prep)
    assert RUNS['trot'][2]['min_contacts'] == 4


def test_the_bench_reg_figure_is_beside_the_headline_not_in_it(monkeypatch):
    """The block's headline and its pass are the held-out weight's figures; the fixed-weight
    figure is the larger of the runs' and changes neither."""
    import types

    from legid_ros.bench import excitation_locomotion as loco

    def fake(kind, args, tmp):
        return {'robot': kind, 'fell': False, 'duration_s': 30.0,
                'dev_ratio_to_truth': {'trot': 1.98, 'stepping': 1.19}[kind],
                'bench_reg': {'reg': 1e-9,
                              'dev_ratio_to_truth': {'trot': 1.06, 'stepping': 1.10}[kind]},
                'online': {'dev_ratio_to_truth': {'trot': 1.2, 'stepping': 1.1}[kind]}}
    monkeypatch.setattr(loco, 'evaluate_run', fake)
    out = loco.locomotion_block(types.SimpleNamespace(locomotion_duration=30.0), None)
    assert out['locomotion_dev_ratio_to_truth'] == 1.98 and out['passed'] is False
    assert out['locomotion_dev_ratio_to_truth_bench_reg'] == 1.10
    assert out['locomotion_online_dev_ratio_to_truth'] == 1.2


def test_the_online_pass_folds_as_the_run_is_prepared():
    """The online folding of each run takes the run's preparation: the trot's accelerometer,
    four-foot rows, transition band and Savitzky-Golay window (rows at the folder's default
    100 Hz whatever the recording rate); settings the folder accepts."""
    from legid_ros.bench.excitation_locomotion import RUNS, online_fold
    from legid_ros.core.pipeline.online_folding import FoldSettings, WindowFolder
    trot = online_fold(RUNS['trot'][2])
    assert trot == {'transition_s': 0.03, 'base_acc': 'imu', 'min_contacts': 4,
                    'derivative_window_s': 0.05}
    for _, _, prep in RUNS.values():
        WindowFolder(FoldSettings(**online_fold(prep)))


def test_falls_over_truths_are_counted_beside_the_figures(monkeypatch):
    """With ``--fall-seeds`` each gait is simulated on that many truths from the figure's
    seed on, its falls counted beside the figures (the pass is the figure's) and reported."""
    import types

    from legid_ros.bench import excitation_locomotion as loco
    from legid_ros.bench.excitation_report import _locomotion

    def fake(kind, args, tmp):
        return {'robot': kind, 'fell': False, 'duration_s': 30.0, 'dev_ratio_to_truth': 1.1}
    calls = []

    def fake_falls(kind, seeds, duration_s, rate_hz=200.0):
        calls.append((kind, list(seeds), duration_s))
        fell = [kind == 'stepping' and s == 4 for s in seeds]
        return {'seeds': list(seeds), 'fell': fell, 'fell_at_s': [9.0 if f else None
                                                                  for f in fell],
                'falls': int(sum(fell)), 'of': len(fell)}
    monkeypatch.setattr(loco, 'evaluate_run', fake)
    monkeypatch.setattr(loco, 'fall_check', fake_falls)
    args = types.SimpleNamespace(locomotion_duration=30.0, seed=3, fall_seeds=3, rate=200.0)
    out = loco.locomotion_block(args, None)
    assert calls == [('trot', [3, 4, 5], 30.0), ('stepping', [3, 4, 5], 30.0)]
    assert out['falls_over_truths']['stepping']['falls'] == 1
    assert out['passed'] is True
    text = '\n'.join(_locomotion(out))
    assert 'stepping fell on 1 of 3 (seeds 3-5: 4)' in text
    assert 'trot fell on 0 of 3' in text
    args.fall_seeds = 0
    assert 'falls_over_truths' not in loco.locomotion_block(args, None)


def test_fall_check_simulates_each_truth():
    """A short trot on one truth stands: one entry per seed, no fall, no fall time."""
    from legid_ros.bench.excitation_locomotion import fall_check
    out = fall_check('trot', [0], 6.0)
    assert out == {'seeds': [0], 'fell': [False], 'fell_at_s': [None], 'falls': 0, 'of': 1}
