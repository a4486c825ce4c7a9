"""Tests of legid_ros.core.identification.defaults: method and parameter set from the robot."""

import json
from pathlib import Path

import pytest

from legid_ros.core.identification.defaults import (FLAT_FT, FLAT_SOLE, KIND_DEFAULTS, POINT,
                                                    foot_kind, resolve)
from legid_ros.core.robot import load_robot

BENCH = Path(__file__).resolve().parents[3] / 'bench'


@pytest.mark.parametrize('robot, kind', [('biped', FLAT_SOLE), ('talos', FLAT_FT),
                                         ('solo12', POINT), ('quadruped', POINT)])
def test_foot_kind_of_the_shipped_robots(robot, kind):
    """The biped has flat feet with sole sensors (force_sensing fsr), Talos flat feet with
    F/T (no force_sensing: wrench), Solo12 and the quadruped point feet."""
    assert foot_kind(load_robot(robot)) == kind


def test_sensing_given_overrides_the_description():
    """The biped read through its 6-axis wrenches is a flat-foot F/T robot."""
    assert foot_kind(load_robot('biped'), 'wrench') == FLAT_FT
    assert foot_kind(load_robot('biped'), '') == FLAT_SOLE


def test_kind_defaults_are_the_sets_the_robots_bench_ran():
    """Each robot of bench/robots.json gets the method the bench found best on it and the
    parameter set the bench ran (grouped_sides on Talos and Solo12)."""
    bench = json.loads((BENCH / 'robots.json').read_text())
    for name, run in bench['robots'].items():
        choice = resolve(load_robot(name))
        assert choice.param_set == bench['param_set'] == run['methods'][choice.method][
            'param_set']
        assert run['methods'][choice.method]['status'] == 'converged'


def test_the_biped_keeps_wu_and_gaos_reduced_set():
    """The biped (flat feet, sole sensors): zmp_newton on the reduced set, as before."""
    choice = resolve(load_robot('biped'))
    assert (choice.method, choice.param_set) == KIND_DEFAULTS[FLAT_SOLE] == ('zmp_newton',
                                                                              'reduced')
    assert choice.line() == ('method zmp_newton, param_set reduced (method and param_set from '
                             'the robot: flat feet with sole sensors)')


def test_given_values_are_kept():
    """A named method keeps its own set (None), a named set is kept, the line says which came
    from the robot."""
    talos = load_robot('talos')
    other = resolve(talos, 'zmp_qp')
    assert (other.method, other.param_set) == ('zmp_qp', None)
    assert 'as given' in other.line() and "param_set the method's" in other.line()
    named = resolve(talos, '', 'standard')
    assert (named.method, named.param_set) == ('zmp_newton', 'standard')
    assert named.line().endswith('(method from the robot: flat feet with 6-axis F/T)')
    same = resolve(talos, 'zmp_newton')
    assert same.param_set == 'grouped_sides'
