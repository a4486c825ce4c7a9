"""Tests of the held-out validation: the forked worker gives what the same work in-process
gives, and its errors reach the caller."""

import numpy as np
import pytest

from legid_ros.core.errors import LegidError
from legid_ros.core.identification.api import identify
from legid_ros.core.identification.prepare import PrepareOptions
from legid_ros.core.identification.validation import HeldOutValidation


def test_background_validation_equals_in_process(biped, run_a, tmp_path):
    """The worker process's deviations and report equal the in-process ones; the truth and
    CAD are compared too, and the identified set beats CAD."""
    cut = int(0.75 * run_a.n)
    train, val = run_a.slice(0, cut), run_a.slice(cut, run_a.n)
    prep = PrepareOptions()
    result = identify(train, biped, 'zmp_newton')
    outs = {}
    for background in (True, False):
        check = HeldOutValidation(val, biped, prep, background=background)
        outs[background] = check.report(tmp_path / str(background), result, run_a.pi_cad,
                                        run_a.pi_true)
    for name in ('identified', 'CAD', 'truth'):
        assert outs[True].dev_mm[name] == pytest.approx(outs[False].dev_mm[name], rel=1e-12)
    assert outs[True].n_samples == outs[False].n_samples > 0
    assert outs[True].dev_mm['identified'] < outs[True].dev_mm['CAD']
    assert (tmp_path / 'True' / 'zmp.png').stat().st_size > 10_000
    assert outs[True].report.read_text().splitlines()[0].startswith('# Identification report')
    assert np.isfinite(list(outs[True].dev_mm.values())).all()


def test_worker_preparation_error_reaches_the_caller(biped, run_a, tmp_path):
    """A held-out recording too short to prepare fails in the worker; report() raises it."""
    result = identify(run_a, biped, 'zmp_newton')
    check = HeldOutValidation(run_a.slice(0, 3), biped, PrepareOptions(), background=True)
    with pytest.raises(LegidError):
        check.report(tmp_path, result, run_a.pi_cad)
    assert check._pool is None  # the worker is stopped either way
