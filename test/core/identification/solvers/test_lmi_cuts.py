"""Tests of the pseudo-inertia cutting planes: the SDP's minimiser in a few QP rounds."""

import pytest

from legid_ros.core.identification.online import OnlineEstimator
from legid_ros.core.identification.solvers.lmi_cuts import LmiCutQP
from legid_ros.core.identification.solvers.qp import scaled_cost
from legid_ros.core.identification.solvers.sdp import solve_sdp
from legid_ros.core.inertial import check_consistency


def _statistics(biped, samples, stop=None):
    est = OnlineEstimator(biped, use_imu=False)
    n = samples.n if stop is None else stop
    for k in range(0, n, 50):
        sl = slice(k, min(k + 50, n))
        est.add_window(samples.t[sl], samples.q[sl, 7:], samples.v[sl, 6:], samples.a[sl, 6:],
                       samples.zmp[sl], samples.fz[sl], None, 'right')
    hs, gs, _ = est.normal.eliminate(est.param.size)
    return est, hs, gs


def _cost(est, hs, gs, pi):
    p, q = scaled_cost(hs, gs, est.normal.n, est.param.cad(), est.param.scales(),
                       est.solver.reg)
    z = (pi - est.param.cad()) / est.param.scales()
    return float(z @ p @ z + 2 * q @ z)


def test_cuts_reach_the_sdp_minimiser_and_keep_the_mass_equality(biped, samples_a):
    """The cut QP ends consistent, on the total-mass plane, at the SDP's cost (not above it)
    and at its masses: the unique minimiser of the regularised consistent problem."""
    est, hs, gs = _statistics(biped, samples_a)
    par, total = est.param, est.total_mass
    cuts = LmiCutQP(par.cad(), par.scales(), par.mass_row(), est.solver.lb, est.solver.ub)
    p, q = scaled_cost(hs, gs, est.normal.n, par.cad(), par.scales(), est.solver.reg)
    sol = cuts.solve(p, q, total)
    pi = par.cad() + par.scales() * sol.z
    sdp, _ = solve_sdp(hs, gs, est.normal.n, par, total, est.solver.lb, est.solver.ub,
                       est.solver.reg)
    assert sol.rounds > 1 and sol.cuts_added > 0  # the plain QP was not consistent
    assert check_consistency(pi, par.link_names).ok
    assert par.mass_row() @ pi == pytest.approx(total, abs=1e-9)
    assert _cost(est, hs, gs, pi) <= _cost(est, hs, gs, sdp) + 1e-7
    assert pi[::10] == pytest.approx(sdp[::10], abs=1e-4)


def test_kept_cuts_and_active_set_give_the_cold_solution(biped, samples_a):
    """A second solve on new statistics, warm (kept cuts, last active set), equals a cold
    quadprog solve under the same cuts."""
    est, hs, gs = _statistics(biped, samples_a, stop=600)
    par = est.param
    cuts = LmiCutQP(par.cad(), par.scales(), par.mass_row(), est.solver.lb, est.solver.ub)
    p, q = scaled_cost(hs, gs, est.normal.n, par.cad(), par.scales(), est.solver.reg)
    cuts.solve(p, q, est.total_mass)
    est2, hs2, gs2 = _statistics(biped, samples_a, stop=650)
    p2, q2 = scaled_cost(hs2, gs2, est2.normal.n, par.cad(), par.scales(), est.solver.reg)
    warm = cuts.solve(p2, q2, est2.total_mass)
    cuts._active = None
    cold = cuts.solve(p2, q2, est2.total_mass, check=False)
    assert warm.z == pytest.approx(cold.z, abs=1e-7)


def test_online_standard_update_is_consistent_by_cuts(biped, samples_a):
    """The online standard set reports its LMI solve by cuts, and a restored state keeps
    them (the restored estimator's first update adds none)."""
    est, _, _ = _statistics(biped, samples_a)
    res = est.update()
    assert res.info['consistent_by'] == 'lmi' and res.consistency.ok
    other = OnlineEstimator(biped, use_imu=False)
    other.load_state_dict(est.state_dict())
    again = other.update()
    assert '0 cuts added' in again.info['status']
    assert again.pi == pytest.approx(res.pi, abs=1e-6)


def test_unreachable_total_mass_is_a_typed_error(biped, samples_a):
    """A total mass the mass bounds cannot reach raises InfeasibleProblemError (never a bare
    solver exception)."""
    from legid_ros.core.errors import InfeasibleProblemError
    est, hs, gs = _statistics(biped, samples_a, stop=300)
    par = est.param
    cuts = LmiCutQP(par.cad(), par.scales(), par.mass_row(), est.solver.lb, est.solver.ub)
    p, q = scaled_cost(hs, gs, est.normal.n, par.cad(), par.scales(), est.solver.reg)
    with pytest.raises(InfeasibleProblemError, match='total-mass'):
        cuts.solve(p, q, 1000.0)
