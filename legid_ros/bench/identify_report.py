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


TRUTH_TEXT = {'out_of_model': 'the out-of-model truth (3-D COM shifts of 5-20 mm, left and right '
                              'legs different with a 0.3 kg sensor box on the left shank, inertia '
                              'about the COM scaled 0.8-1.2, a 1 kg payload off the trunk axis: '
                              'no reduced set holds it; its reduced set is the group mean)',
              'table2': 'Wu & Gao\'s Table 2 truth (same factor and axial COM shift on both '
                        'legs, CAD inertia: the ZMP reduced set holds it exactly)'}


GROUPED_ROWS = ('zmp_newton_grouped', 'zmp_newton_grouped_ft', 'zmp_newton_sides_ft')


def _headline(res: dict) -> list:
    keys = [k for k in ('mass_err_pct_max_identifiable', 'com_err_mm_max_identifiable',
                        'mass_err_pct_max_identifiable_ft_foot',
                        'com_err_mm_max_identifiable_ft_foot', 'mass_err_pct_max',
                        'com_err_mm_max', 'mass_err_pct_max_ft_foot', 'com_err_mm_max_ft_foot',
                        'std_coverage_ratio') if res.get(k) is not None]
    rows = [f'| `{k}` | {res[k]:.3g} |' for k in keys]
    for m in GROUPED_ROWS:  # in their own set (grouped: per group mass, 3-D COM norm)
        for k, v in (res.get(m) or {}).items():
            rows.append(f'| `{m}.{k}` | {v:.3g} |')
    return ['| figure | value |', '|---|---|'] + rows


def _coverage(res: dict) -> list:
    lines = ['Reported standard deviation / spread over the runs, per identifiable combination '
             '(geometric mean; `legid_ros.core.identification.uncertainty`):', '',
             '| method @ rate | ratio | per combination |', '|---|---|---|']
    for key, d in res['rates'].items():
        for m, md in d['methods'].items():
            cov = md.get('std_coverage') or {}
            if cov.get('ratio') is None:
                continue
            lines.append(f'| {m} @ {key} Hz | {cov["ratio"]:.2f} | ' + '; '.join(
                f'{r:.2f} ({c})' for r, c in zip(cov['ratios'], cov['combinations'])) + ' |')
    return lines


def write_markdown(res: dict, path: Path, table2: dict) -> None:
    """Write the results of ``legid bench identify`` as markdown tables to ``path``."""
    lines = ['# `legid bench identify`', '',
             f'Protocol: {res["protocol"]["runs"]} synthetic runs of '
             f'{res["protocol"]["duration_s"]:g} s per rate, efforts with realistic friction '
             '(Stribeck, asymmetric, ripple), torque-constant errors and noise, validation on a '
             'separate run. Two truths: the default figures are for '
             f'{TRUTH_TEXT[res.get("truth_class", "out_of_model")]}; the second part repeats '
             f'them for {TRUTH_TEXT["table2"]}.',
             f'Elapsed {res["elapsed_s"]:.0f} s. Passed: {res["passed"]}.', '']
    lines += _truth_section(res)
    if 'table2' in res:
        lines += ['# Second truth: Wu & Gao\'s Table 2 (inside the model)', '',
                  f'Passed: {res["table2"].get("passed")}.', ''] + _truth_section(res['table2'])
    lines += _tail(res, table2)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('\n'.join(lines) + '\n')


def _truth_section(res: dict) -> list:
    """Tables of one truth."""
    lines = [f'## Truth: `{res.get("truth_class", "out_of_model")}`', ''] + _headline(res) + [
        '', '"identifiable": the error in the combinations each run\'s own uncertainty calls '
        'identifiable (its components along the others removed); "max mass err, trunk / thigh '
        '/ shank+foot": the group combinations. Rows `zmp_newton_grouped*` / `_sides_ft`: '
        '`zmp_newton` on the grouped set (mass and 3-D COM per link group, legs mirrored or per '
        'side; reg chosen on a held-out slice); their identifiable errors are in that set (per '
        'group or side: mass, norm of the 3-D COM error), their other columns in the reduced '
        'set.', '']
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
                  'shank+foot [%] | max COM err [mm] | identifiable: max mass / COM err '
                  '[% / mm] | max mass / COM err modulo the ZMP '
                  'invariance [% / mm] | rel. RMS torque err, median / max joint [%] '
                  '| consistent '
                  '| time [s] |',
                  '|---|---|---|---|---|---|---|---|---|---|',
                  f'| CAD | {d["zmp_dev_mm"]["cad"]:.2f} | | | | | | '
                  f'{100 * d.get("torque_rel_rms_cad_median", float("nan")):.1f} / '
                  f'{100 * d.get("torque_rel_rms_cad_max", float("nan")):.1f} | | |',
                  f'| truth (noise floor) | {d["zmp_dev_mm"]["truth"]:.2f} | | | | | | | | |']
        for m, md in d['methods'].items():
            lines.append(f'| {m} | {md["zmp_dev_mm"]:.2f} | {md["mass_err_pct_max"]:.1f} | '
                         f'{md["mass_err_pct_max_groups"]:.1f} | '
                         f'{md["com_err_mm_max"]:.1f} | '
                         f'{md["mass_err_pct_max_identifiable"]:.1f} / '
                         f'{md["com_err_mm_max_identifiable"]:.1f} | '
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
    lines += _coverage(res) + ['']
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
    return lines


def _tail(res: dict, table2: dict) -> list:
    """Online timing and the published table."""
    lines = []
    if 'online_update_ms_median' in res:
        lines += ['## Online estimator (full standard set, 130 parameters)', '',
                  f'median update CPU time {res["online_update_ms_median"]:.2f} ms '
                  f'(p95 {res["online_update_ms_p95"]:.2f} ms, mean '
                  f'{res["online_update_ms_mean"]:.2f} ms) under the pseudo-inertia LMIs, '
                  f'{res["online_update_plain_ms_median"]:.2f} ms without them (ratio '
                  f'{res["online_update_lmi_over_plain"]:.2f}); at 10 s of history '
                  f'{res["online_update_ms_at_10s"]:.2f} ms, at '
                  f'{res["online_history_s"]:.0f} s {res["online_update_ms_at_end"]:.2f} ms '
                  f'(ratio {res["update_ratio_600s_vs_10s"]:.2f}, interleaved); '
                  f'{res["online_updates"]} updates in the run, median '
                  f'{res["online_update_ms_in_run_median"]:.2f} ms. Other sets: ' + ', '.join(
                      f'{k} {v:.2f} ms' for k, v in res['online_update_ms_by_set'].items())
                  + f' ({res["online_timing"]}).', '']
    lines += ['Wu & Gao\'s Table 2 for comparison (real robot; its truth is unknown):', '',
              '| set | lc0 | lc1 | lc2 | lc3 | m0 | m1 | m2 | m3 |', '|---' * 9 + '|']
    for k, v in table2.items():
        lines.append(f'| {k} | ' + ' | '.join(f'{x:g}' for x in v) + ' |')
    return lines
