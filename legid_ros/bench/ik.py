"""``legid bench ik``: extended-Jacobian IK vs gradient projection vs pink.

The extended-Jacobian IK of Chen, Guo, Hou & Wang 2021 against its baselines.

One run, one leg, one set of foot targets (the default trot sampled at the control period):

* points per second of the closed-form EJM (vectorised), the differential EJM, GPM and pink
  (same leg, same targets: foot position and landing angle, converged to 1e-9 m / 1e-9 rad);
* joint drift after 100 gait cycles: joints at t = 100 T minus the exact solution at t = 0;
* foot position error of the closed form (pinocchio forward kinematics);
* the paper's slope case (beta = 12 deg, front 30 deg, hind 50 deg): reachability, stability
  check ``|S1 - S2| <= r`` and friction-cone check.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from legid_ros.core.gait.slope import slope_stability, touchdown_friction
from legid_ros.core.gait.trot import TrotParams, TrotScheduler, task_profile
from legid_ros.core.ik.ejm import solve_closed_form, solve_differential, solve_point
from legid_ros.core.ik.gpm import solve_gpm
from legid_ros.core.ik.leg import LEGS, LegKinematics, planar_fk
from legid_ros.core.ik.pink_ref import PinkLegSolver


def add_arguments(parser) -> None:
    """Options of the benchmark."""
    parser.add_argument('--leg', default='rf', choices=LEGS, help='leg to benchmark')
    parser.add_argument('--points', type=int, default=1_000_000,
                        help='targets for the closed-form speed test')
    parser.add_argument('--cycles', type=int, default=100, help='gait cycles for the drift test')
    parser.add_argument('--dt', type=float, default=1e-3, help='control period [s]')
    parser.add_argument('--pink-points', type=int, default=400, help='targets solved by pink')
    parser.add_argument('--repeats', type=int, default=5, help='timing repeats (best kept)')
    parser.add_argument('--mu', type=float, default=0.6, help='friction coefficient')


def _targets(sched: TrotScheduler, leg: str, times: np.ndarray):
    """Planar targets, velocities, task values and rates of one leg."""
    tc = sched.leg_time(leg, times)
    pos, vel, _ = sched.cycloids[leg].evaluate(tc)
    psi, psi_dot = task_profile(sched.params, leg, tc)
    return pos, vel, psi, psi_dot


def _best_time(fn, repeats: int) -> float:
    best = float('inf')
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def run(args) -> dict:
    """Run the benchmark; returns the results (also written to ``<out>/ik.md``)."""
    bar = tqdm(total=7, desc='bench ik', file=sys.stderr, disable=not sys.stderr.isatty())
    kin = {leg: LegKinematics(leg) for leg in LEGS}
    lk = kin[args.leg]
    geo = lk.geometry
    sched = TrotScheduler(geo, TrotParams())
    period, dt = sched.params.period, args.dt
    res = {'leg': args.leg, 'period_s': period, 'dt_s': dt,
           'stride_m': sched.params.stride, 'lift_m': sched.params.lift}

    # 1. closed form: speed (landing and hip tasks)
    times = np.arange(args.points) * dt
    xz, _, psi, _ = _targets(sched, args.leg, times)
    sol = solve_closed_form(geo, xz, 'landing', psi, times=times, leg=args.leg)
    t_cf = _best_time(lambda: solve_closed_form(geo, xz, 'landing', psi, times=times,
                                                leg=args.leg), args.repeats)
    hip = sol.q[:, 1]
    t_hip = _best_time(lambda: solve_closed_form(geo, xz, 'hip', hip, times=times, leg=args.leg),
                       args.repeats)
    res['ejm_points_per_s'] = args.points / t_cf
    res['ejm_hip_points_per_s'] = args.points / t_hip
    res['ejm_min_abs_det_je_m2'] = sol.min_abs_det
    bar.update()

    # 2. foot error: closed-form FK on every point, pinocchio FK on one cycle
    fk_err = float(np.max(np.linalg.norm(planar_fk(sol.q[:, 1:], geo) - xz, axis=-1)))
    ncyc = int(round(period / dt))
    pin_err = 0.0
    for k in range(min(ncyc, args.points)):
        p = lk.fk(sol.q[k])
        pin_err = max(pin_err, float(np.hypot(p[0] - xz[k, 0], p[2] - xz[k, 1])))
    res['foot_err_m'] = max(fk_err, pin_err)
    res['foot_err_pinocchio_m'] = pin_err
    bar.update()

    # 3. drift over many cycles: closed form, differential EJM, GPM
    steps = args.cycles * ncyc
    t_run = np.arange(steps + 1) * dt
    xz_r, vel_r, psi_r, psid_r = _targets(sched, args.leg, t_run)
    exact = solve_closed_form(geo, xz_r, 'landing', psi_r, times=t_run, leg=args.leg).q[:, 1:]
    res['ejm_drift_rad'] = float(np.max(np.abs(exact[-1] - exact[0])))
    th0 = exact[0]
    t0 = time.perf_counter()
    diff = solve_differential(geo, t_run, xz_r, vel_r, 'landing', psi_r, psid_r, th0,
                              kp=1.0 / dt, leg=args.leg)
    t_diff = time.perf_counter() - t0
    res['ejm_diff_points_per_s'] = (steps + 1) / t_diff
    res['ejm_diff_drift_rad'] = float(np.max(np.abs(diff.th[-1] - th0)))
    res['ejm_diff_drift_10_to_100_cycles_rad'] = float(
        np.max(np.abs(diff.th[-1] - diff.th[10 * ncyc])))
    res['ejm_diff_foot_err_m'] = float(np.max(diff.foot_err))
    diff0 = solve_differential(geo, t_run, xz_r, vel_r, 'landing', psi_r, psid_r, th0, kp=0.0,
                               leg=args.leg)
    res['ejm_diff_nocorr_drift_rad'] = float(np.max(np.abs(diff0.th[-1] - th0)))
    bar.update()
    t0 = time.perf_counter()
    gpm = solve_gpm(geo, t_run, xz_r, vel_r, th0, k=-1.0)
    t_gpm = time.perf_counter() - t0
    res['gpm_points_per_s'] = (steps + 1) / t_gpm
    res['gpm_drift_rad'] = float(np.max(np.abs(gpm.th[-1] - th0)))
    res['gpm_drift_per_joint_rad'] = [float(v) for v in gpm.th[-1] - th0]
    res['gpm_foot_err_m'] = float(np.max(gpm.foot_err))
    bar.update()

    # 4. pink on the same targets (first pink_points of the run)
    npk = min(args.pink_points, steps + 1)
    pink = PinkLegSolver(lk)
    t0 = time.perf_counter()
    pr = pink.solve(xz_r[:npk], psi_r[:npk], th0)
    t_pink = time.perf_counter() - t0
    res['pink_solver'] = pink.solver
    res['pink_points_per_s'] = npk / t_pink
    res['pink_iterations_mean'] = float(np.mean(pr.iterations))
    res['pink_iterations_max'] = int(np.max(pr.iterations))
    res['pink_foot_err_m'] = float(np.max(pr.foot_err))
    res['pink_vs_ejm_max_joint_diff_rad'] = float(np.max(np.abs(pr.th - exact[:npk])))
    res['speedup_vs_pink'] = res['ejm_points_per_s'] / res['pink_points_per_s']
    # one target per call, plain floats (what a per-sample real-time loop would do)
    n_pt = min(20000, args.points)
    pts = np.stack([xz[:n_pt, 0], np.zeros(n_pt), xz[:n_pt, 1]], -1).tolist()
    psis = psi[:n_pt].tolist()

    def per_point():
        for k in range(n_pt):
            solve_point(geo, pts[k], 'landing', psis[k], leg=args.leg)

    res['ejm_point_points_per_s'] = n_pt / _best_time(per_point, max(1, args.repeats // 2))
    res['point_speedup_vs_pink'] = res['ejm_point_points_per_s'] / res['pink_points_per_s']
    bar.update()

    # 5. the paper's slope case
    slope = TrotParams(landing_front=float(np.radians(30.0)), landing_hind=float(np.radians(50.0)))
    ssched = TrotScheduler(geo, slope)
    st = slope_stability(ssched, float(np.radians(12.0)), kin=kin)
    tc = np.arange(ncyc) * dt
    plan = ssched.plan(tc)
    for leg in LEGS:  # raises UnreachableTargetError if any point is unreachable
        solve_closed_form(geo, plan.pos[leg], 'landing', plan.psi[leg], times=tc, leg=leg)
    fr = touchdown_friction(ssched, args.mu)
    res['slope'] = {
        'beta_deg': 12.0, 'landing_front_deg': 30.0, 'landing_hind_deg': 50.0,
        'x_centers_m': ssched.params.x_centers, 'reachable': True,
        'h_m': st.h, 's1_m': st.s1, 's2_m': st.s2, 'r_m': st.r, 'margin_m': st.margin,
        'stable': st.ok, 'mu': args.mu, 'cone_deg': float(np.degrees(fr['lf'].cone)),
        'touchdown_velocity_deg': float(np.degrees(fr['lf'].velocity_angle)),
        'touchdown_in_cone': all(f.ok for f in fr.values()),
        'link_angle_deg': {leg: float(np.degrees(f.link_angle)) for leg, f in fr.items()},
        'link_in_cone': {leg: f.link_ok for leg, f in fr.items()}}
    bar.update()

    res['passed'] = bool(res['ejm_points_per_s'] >= 1e6 and res['speedup_vs_pink'] >= 10
                         and res['ejm_drift_rad'] <= 1e-9 and res['foot_err_m'] <= 1e-9
                         and st.ok)
    out = Path(getattr(args, 'out', 'bench'))
    out.mkdir(parents=True, exist_ok=True)
    (out / 'ik.md').write_text(_markdown(res, args))
    bar.update()
    bar.close()
    return res


def _markdown(res: dict, args) -> str:
    s = res['slope']
    rows = [
        ('closed-form EJM, landing task', f"{res['ejm_points_per_s']:.3g}", '-',
         f"{res['ejm_drift_rad']:.2g}", f"{res['foot_err_m']:.2g}"),
        ('closed-form EJM, hip task', f"{res['ejm_hip_points_per_s']:.3g}", '-', '-', '-'),
        ('differential EJM (kp = 1/dt)', f"{res['ejm_diff_points_per_s']:.3g}", '-',
         f"{res['ejm_diff_drift_rad']:.2g}", f"{res['ejm_diff_foot_err_m']:.2g}"),
        ('GPM (k = -1, no correction)', f"{res['gpm_points_per_s']:.3g}", '-',
         f"{res['gpm_drift_rad']:.2g}", f"{res['gpm_foot_err_m']:.2g}"),
        (f"pink ({res['pink_solver']}, tol 1e-9 m / 1e-9 rad)", f"{res['pink_points_per_s']:.3g}",
         f"{res['pink_iterations_mean']:.2f} (max {res['pink_iterations_max']})", '-',
         f"{res['pink_foot_err_m']:.2g}"),
    ]
    lines = [f"# legid bench ik (leg {res['leg']}, T = {res['period_s']} s, "
             f"dt = {res['dt_s']} s, {args.cycles} cycles)", '',
             '| method | points/s | iterations/point | drift after cycles [rad] | '
             'max foot error [m] |', '|---|---|---|---|---|']
    lines += ['| ' + ' | '.join(r) + ' |' for r in rows]
    lines += ['', f"Closed form vs pink: {res['speedup_vs_pink']:.0f}x per point "
              f"(vectorised); one target per call (`solve_point`): "
              f"{res['ejm_point_points_per_s']:.3g} points/s, "
              f"{res['point_speedup_vs_pink']:.0f}x pink. "
              f"GPM drift per joint (th2, th3, th4): "
              + ', '.join(f'{v:+.3g}' for v in res['gpm_drift_per_joint_rad']) + ' rad.',
              '', f"Slope beta = 12 deg, front 30 deg, hind 50 deg: reachable {s['reachable']}, "
              f"S1 = {s['s1_m']:.4f} m, S2 = {s['s2_m']:.4f} m, r = {s['r_m']:.4f} m, "
              f"margin {s['margin_m']:.4f} m, stable {s['stable']}; touchdown velocity "
              f"{s['touchdown_velocity_deg']:.1f} deg inside the {s['cone_deg']:.1f} deg cone "
              f"(mu = {s['mu']}): {s['touchdown_in_cone']}.", '',
              f"passed: {res['passed']}", '']
    return '\n'.join(lines)
