"""Markdown report of ``legid bench identify`` (tables of the reduced set, ZMP deviations,
the ZMP signature, the bias check and the online timing)."""

from __future__ import annotations

from pathlib import Path


def _fmt_row(vals, stds=None):
    cells = []
    for i, v in enumerate(vals):
        unit = 1e3 if i < 4 else 1.0
        digits = 1 if i < 4 else 2
        cell = f'{v * unit:.{digits}f}'
        if stds is not None:
            cell += f' ± {stds[i] * unit:.{digits}f}'
        cells.append(cell)
    return cells


def write_markdown(res: dict, path: Path, table2: dict) -> None:
    """Write the results of ``legid bench identify`` as markdown tables to ``path``."""
    lines = ['# `legid bench identify`', '',
             f'Protocol: {res["protocol"]["runs"]} synthetic runs of '
             f'{res["protocol"]["duration_s"]:g} s per rate, truth = CAD perturbed by Wu & '
             'Gao\'s Table 2, efforts with realistic friction (Stribeck, asymmetric, ripple), '
             'torque-constant errors and noise, validation on a separate run.',
             f'Elapsed {res["elapsed_s"]:.0f} s. Passed: {res["passed"]}.', '']
    for key, d in res['rates'].items():
        lines += [f'## {key} Hz: reduced set (mean ± std over runs; lc [mm], m [kg])', '',
                  '| set | ' + ' | '.join(d['names']) + ' |',
                  '|---' * (len(d['names']) + 1) + '|',
                  '| truth | ' + ' | '.join(_fmt_row(d['truth'])) + ' |',
                  '| CAD | ' + ' | '.join(_fmt_row(d['cad'])) + ' |']
        for m, md in d['methods'].items():
            lines.append(f'| {m} | ' + ' | '.join(_fmt_row(md['mean'], md['std'])) + ' |')
        lines += ['', f'Validation ZMP deviation ({key} Hz, mean over runs) and facts:', '',
                  '| method | ZMP dev [mm] | max mass err [%] | max mass err, trunk / thigh / '
                  'shank+foot [%] | max COM err [mm] | max mass / COM err modulo the ZMP '
                  'invariance [% / mm] | rel. RMS torque err, median / max joint [%] '
                  '| consistent '
                  '| time [s] |',
                  '|---|---|---|---|---|---|---|---|---|',
                  f'| CAD | {d["zmp_dev_mm"]["cad"]:.2f} | | | | | '
                  f'{100 * d.get("torque_rel_rms_cad_median", float("nan")):.1f} / '
                  f'{100 * d.get("torque_rel_rms_cad_max", float("nan")):.1f} | | |',
                  f'| truth (noise floor) | {d["zmp_dev_mm"]["truth"]:.2f} | | | | | | | |']
        for m, md in d['methods'].items():
            lines.append(f'| {m} | {md["zmp_dev_mm"]:.2f} | {md["mass_err_pct_max"]:.1f} | '
                         f'{md["mass_err_pct_max_identifiable"]:.1f} | '
                         f'{md["com_err_mm_max"]:.1f} | '
                         f'{md["mass_err_pct_max_mod_invariance"]:.1f} / '
                         f'{md["com_err_mm_max_mod_invariance"]:.1f} | '
                         f'{100 * md.get("torque_rel_rms_median", float("nan")):.1f} / '
                         f'{100 * md.get("torque_rel_rms_max", float("nan")):.0f} | '
                         f'{md["consistent"]} | '
                         f'{md["time_s_mean"]:.1f} |')
        if 'zmp_newton_ft' in d['methods']:
            lines += ['', '`zmp_newton_ft`: the swinging foot weighed by its ankle F/T sensor '
                      '(`core/identification/rows/foot_ft.py`), then `zmp_newton` with that foot '
                      'mass held (`legid identify --foot-from-ft`).']
        if 'zmp_signature' in d:
            lines += ['', f'ZMP signature of the reduced set on the validation motion ({key} Hz; '
                      'RMS model-ZMP change per scale unit = 2 cm of COM or 20 % of a mass, '
                      'weakest first; a direction is located by the data only if this is well '
                      'above the prior weight sqrt(reg) = 316 um and the noise floor / '
                      'sqrt(samples)):', '', '```'] + d['zmp_signature']['lines'] + ['```']
        lines.append('')
    if 'exact_check' in res:
        lines += ['## Bias check: noise-free run, exact signals (true base, accelerations, ZMP), '
                  'true total mass, `zmp_newton` Gauss-Newton', '',
                  '| reg [m^2] | RMS ZMP residual [m] | mass err [%] | COM err [mm] | mass err '
                  'modulo invariance [%] | COM err modulo invariance [mm] |',
                  '|---|---|---|---|---|---|']
        for reg, e in res['exact_check'].items():
            lines.append(f'| {reg} | {e["zmp_rms_m"]:.1e} | '
                         + ' | '.join(', '.join(f'{v:.2f}' for v in e[k]) for k in (
                             'mass_err_pct', 'com_err_mm', 'mass_err_pct_mod_invariance',
                             'com_err_mm_mod_invariance')) + ' |')
        lines.append('')
    if 'online_update_ms_median' in res:
        lines += ['## Online estimator (full standard set, 130 parameters)', '',
                  f'median update CPU time {res["online_update_ms_median"]:.2f} ms '
                  f'(p95 {res["online_update_ms_p95"]:.2f} ms; wall clock on this shared '
                  f'machine: median {res["online_update_wall_ms_median"]:.2f} ms, p95 '
                  f'{res["online_update_wall_ms_p95"]:.2f} ms) over '
                  f'{res["online_updates"]} updates; at 10 s of history '
                  f'{res["online_update_ms_at_10s"]:.2f} ms, at '
                  f'{res["online_history_s"]:.0f} s {res["online_update_ms_at_end"]:.2f} ms '
                  f'(ratio {res["update_ratio_600s_vs_10s"]:.2f}, interleaved; in the run: '
                  f'{res.get("update_ratio_in_run", float("nan")):.2f}).', '']
    lines += ['Wu & Gao\'s Table 2 for comparison (real robot; its truth is unknown):', '',
              '| set | lc0 | lc1 | lc2 | lc3 | m0 | m1 | m2 | m3 |', '|---' * 9 + '|']
    for k, v in table2.items():
        lines.append(f'| {k} | ' + ' | '.join(f'{x:g}' for x in v) + ' |')
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('\n'.join(lines) + '\n')
