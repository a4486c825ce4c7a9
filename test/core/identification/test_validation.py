"""Tests of the held-out validation: the forked worker gives what the same work in-process
gives, and its errors reach the caller."""

import numpy as np
import pytest

from legid_ros.core.errors import BadInputError, LegidError
from legid_ros.core.identification.api import identify
from legid_ros.core.identification.prepare import PrepareOptions
from legid_ros.core.identification.validation import HeldOutValidation


def _split(rec):
    cut = int(0.75 * rec.n)
    return rec.slice(0, cut), rec.slice(cut, rec.n)


def test_background_validation_equals_in_process(biped, run_a, tmp_path):
    """The worker's training recording, deviations and report equal the in-process ones;
    the truth and CAD are compared too, and the identified set beats CAD."""
    train_ref, _ = _split(run_a)
    result = identify(train_ref, biped, 'zmp_newton')
    outs = {}
    for background in (True, False):
        check = HeldOutValidation(biped, background=background)
        check.start_load(lambda: _split(run_a))
        train = check.training()
        assert np.array_equal(train.q, train_ref.q) and train.n == train_ref.n
        check.prepare(PrepareOptions())
        outs[background] = check.report(tmp_path / str(background), result, run_a.pi_cad,
                                        run_a.pi_true)
        check.close()
    for name in ('identified', 'CAD', 'truth'):
        assert outs[True].dev_mm[name] == pytest.approx(outs[False].dev_mm[name], rel=1e-12)
    assert outs[True].n_samples == outs[False].n_samples > 0
    assert outs[True].dev_mm['identified'] < outs[True].dev_mm['CAD']
    assert (tmp_path / 'True' / 'zmp.png').stat().st_size > 10_000
    assert outs[True].report.read_text().splitlines()[0].startswith('# Identification report')


def test_worker_errors_reach_the_caller(biped, run_a, tmp_path):
    """A failing load and a held-out recording too short to prepare fail in the worker;
    training() and report() raise them, and the worker is stopped."""
    def bad_load():
        raise BadInputError('bag run.mcap has no /joint_states topic')

    check = HeldOutValidation(biped)
    check.start_load(bad_load)
    with pytest.raises(BadInputError, match='joint_states'):
        check.training()
    check.close()
    result = identify(run_a, biped, 'zmp_newton')
    check = HeldOutValidation(biped)
    check.start_load(lambda: (run_a, run_a.slice(0, 3)))
    check.training()
    check.prepare(PrepareOptions())
    with pytest.raises(LegidError):
        check.report(tmp_path, result, run_a.pi_cad)
    assert check._pool is None
