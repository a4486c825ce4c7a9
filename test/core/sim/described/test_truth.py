"""Tests of legid_ros.core.sim.described.truth (a true robot outside every parameter set)."""

import numpy as np

from legid_ros.core.inertial import check_consistency, get_parameters, unpack
from legid_ros.core.sim.described import perturbed_truth


def _com(pi, i):
    m, h, _ = unpack(pi[10 * i:10 * i + 10])
    return m, h / m


def test_truth_is_consistent_and_off_every_axis(solo12):
    """Every link's COM moves in 3-D and its mass changes; the set stays physically consistent."""
    cad = get_parameters(solo12.model)
    pi, info = perturbed_truth(solo12, seed=3)
    assert check_consistency(pi, solo12.body_names).ok
    for i in range(len(solo12.body_names)):
        m0, c0 = _com(cad, i)
        m1, c1 = _com(pi, i)
        assert m1 != m0
        assert np.all(np.abs(c1 - c0) > 1e-4)  # every axis moved (payloads move it further)
    assert info['class'] == 'out_of_model' and info['mass_true_kg'] > info['mass_cad_kg']


def test_one_leg_carries_a_box_its_mirror_does_not(talos):
    """The box link's mass grows by the box, its mirrored partner's does not."""
    cad = get_parameters(talos.model)
    pi, info = perturbed_truth(talos, seed=0)
    names = talos.body_names
    box = info['box_link']
    partner = box.replace('left', 'right') if 'left' in box else box.replace('right', 'left')
    i, j = names.index(box), names.index(partner)
    gain_box = pi[10 * i] - 1.08 * cad[10 * i]
    gain_partner = pi[10 * j] - 1.08 * cad[10 * j]
    assert gain_box > 0.9 * info['box_kg'] - 0.1 * cad[10 * i]
    assert gain_partner <= 0.0
