"""Markdown report of ``legid bench accuracy`` (see :mod:`legid_ros.bench.accuracy`)."""

from __future__ import annotations

LABELS = {'cad': 'CAD', 'torque_ls': 'torque LS', 'floating_qp': 'floating-base',
          'zmp_newton': 'ZMP Newton', 'zmp_qp': 'ZMP QP', 'sdp': 'SDP',
          'zmp_newton_ft': 'ZMP Newton + ankle F/T foot',
          'zmp_newton_grouped': 'ZMP Newton, grouped set',
          'zmp_newton_grouped_ft': 'ZMP Newton, grouped set + ankle F/T foot',
          'zmp_newton_sides_ft': 'ZMP Newton, grouped per side + ankle F/T feet',
          'zmp_qp_grouped': 'ZMP rows, grouped set (Newton)'}
CAL_SUFFIX = '_cal'


def label(key: str) -> str:
    """Readable name of a table key ('zmp_qp_cal' -> 'ZMP QP, calibration errors')."""
    if key.endswith(CAL_SUFFIX):
        return LABELS.get(key[:-len(CAL_SUFFIX)], key) + ', calibration errors'
    return LABELS.get(key, key)


def _physics_line(r: dict) -> str:
    p = r['physics']
    return ('Physics over all runs: smallest support-corner force '
            f'{min(x["support_corner_force_min_n"] for x in p):.1f} N (all four corners always '
            f'loaded when > 0), largest sole slip '
            f'{1e3 * max(x["support_slip_max_m"] for x in p):.2f} mm / '
            f'{1e3 * max(x["support_yaw_slip_max_rad"] for x in p):.2f} mrad, largest trunk '
            f'height change {1e3 * max(x["trunk_height_drop_m"] for x in p):.1f} mm (planned), '
            f'swing foot touch-down force {max(x["swing_force_max_n"] for x in p):.1f} N.')


TRUTH_TEXT = {'out_of_model': 'out-of-model truth (3-D COM shifts of 5-20 mm, left and right '
                              'legs different with a 0.3 kg sensor box on the left shank, '
                              'inertia about the COM scaled 0.8-1.2, a 1 kg payload off the '
                              'trunk axis; no reduced set holds it, its reduced set is the '
                              'group mean)',
              'table2': 'Wu & Gao\'s Table 2 truth (same mass factor and axial COM shift on '
                        'both legs, CAD inertia: the ZMP reduced set holds it exactly)'}


def _protocol_line(r: dict) -> str:
    """What the runs did and which samples the methods used."""
    if r.get('protocol', 'right') != 'swap':
        return 'Protocol: single support on the right foot (Wu & Gao 2021).'
    return ('Protocol: support swap (right-support excitation, a double-support transfer, '
            'left-support excitation: both feet swing and are weighed by their ankle F/T); every '
            'method and the validation use the single-support samples more than 0.5 s from a '
            'touch-down or lift-off (double-support samples are 1.5-12 mm off the model in '
            'physics, against 0.33 mm; `legid identify --transition-s`). Slip during the '
            'transfer moves (not used): up to '
            f'{1e3 * max(p.get("transfer_slip_max_m", 0.0) for p in r["physics"]):.2f} mm.')


def markdown(r: dict) -> str:
    """The result as a Markdown report (the default truth, then ``table2`` if present)."""
    text = _one_truth(r, '# End-to-end accuracy on MuJoCo physics (ZMP protocol of Wu & Gao '
                      '2021)')
    if 'table2' in r:
        text += '\n' + _one_truth(r['table2'], '# Second truth: Wu & Gao\'s Table 2 (inside '
                                   'the model)')
    return text


def _one_truth(r: dict, title: str) -> str:
    names = r['reduced_names']
    half = len(names) // 2
    rtf = r['real_time_factor']
    lines = [title, '']
    if r.get('command'):
        lines += [f'Command: `{r["command"]}`', '']
    lines += [f'Truth (`truth_class` = `{r.get("truth_class", "table2")}`): '
              f'{TRUTH_TEXT.get(r.get("truth_class", "table2"), "")}.', '',
              f'{r["runs"]} runs of {r["duration_s"]:g} s at {r["rate_hz"]:g} Hz (physics and '
              f'servos at 1 kHz), validation run seed {r["validation_seed"]}; '
              f'robot fell: {"yes" if r["fell"] else "no"}; physics real-time factor '
              + (f'{rtf:.1f}' if rtf else 'n/a (cached runs)')
              + f'; identification on every {r["step"]}-th sample; data preparation '
              f'{r["prepare_s_per_run"]:.1f} s per run (not in the times below); total '
              f'{r["total_wall_s"]:.0f} s.', '', _protocol_line(r), '', _physics_line(r), '']
    cal = r.get('calibration')
    if cal:
        lines += ['"calibration errors": the same runs seen through miscalibrated sensors, '
                  'fixed per robot: torque constants (joint effort = motor current x nominal '
                  f'constant, Wu & Gao\'s argument) {100 * cal["torque_constant_std"]:g} %, '
                  f'sole sensor gains {100 * cal["fsr_gain_std"]:g} %, F/T gains '
                  f'{100 * cal["ft_gain_std"]:g} % (relative std). The other rows use the exact '
                  'servo and contact forces (plus noise).', '']
    if r.get('zmp_dev_truth_mm'):
        lines += ['Model floor (the MuJoCo truth parameters on the validation run): ' + ', '.join(
            f'{ {"calibration": "miscalibrated"}.get(k, k)} sensors {v["mean"]:.2f} mm '
            f'(p95 {v["p95"]:.2f} mm)'
            for k, v in r['zmp_dev_truth_mm'].items()) + '.', '']
    rf = r.get('zmp_dev_reduced_class_floor_mm')
    if rf:
        lines += [f'Reduced-set floor (the ZMP reduced set fitted to the truth\'s own model ZMP, '
                  f'CAD elsewhere; no reduced-set method can go below it): {rf["mean"]:.2f} mm '
                  f'(p95 {rf["p95"]:.2f} mm; it differs from the truth\'s model ZMP by '
                  f'{rf["model_zmp_rms_mm"]:.2f} mm RMS).', '']
    lines += ['| method | ZMP dev mean [mm] | p95 [mm] | mass err max [%] | '
              + ' | '.join(f'm {n[2:]} [%]' for n in names[half:])
              + ' | shank+foot [%] | mass err max mod inv. [%] | COM err max [mm] | '
              'identifiable: mass / COM err max [% / mm] | time/run [s] |',
              '|---' * (9 + half) + '|']
    for m, t in r['methods'].items():
        me = t['mass_err_pct']
        lines.append(f'| {label(m)} | {t["zmp_dev_mm"]:.2f} | {t["zmp_dev_p95_mm"]:.2f} | '
                     f'{t["mass_err_pct_max"]:.1f} | '
                     + ' | '.join(f'{me[n[2:]]:+.1f}' for n in names[half:])
                     + f' | {me.get("shank+foot", float("nan")):+.1f} | '
                     f'{t.get("mass_err_pct_max_mod_invariance", float("nan")):.1f} | '
                     f'{t["com_err_mm_max"]:.1f} | '
                     f'{t.get("mass_err_pct_max_identifiable", float("nan")):.1f} / '
                     f'{t.get("com_err_mm_max_identifiable", float("nan")):.1f} | '
                     f'{t["time_s"]:.2f} |')
    lines += ['', '"mod inv.": mass error against the point of the truth\'s ZMP invariance curve '
              'with the estimate\'s thigh mass (`core.identification.parameters.equivalence`): '
              'the error in the directions the ZMP can see. "identifiable": the reduced-set error '
              'without its components along the combinations each run\'s own uncertainty calls '
              'not identifiable (`core.identification.uncertainty`), mean over the runs.']
    grouped = [m for m, t in r['methods'].items() if t.get('identifiable_core')]
    if grouped:
        lines += ['', '"grouped set" (`core/identification/parameters/grouped.py`): mass and 3-D '
                  'COM per link group, legs mirrored ("per side": each side its own), inertia '
                  'about the COM at CAD; `zmp_newton` chooses its regularisation weight on a '
                  'held-out slice (chosen per run: '
                  + '; '.join(f'{label(m)} {r["methods"][m].get("reg_chosen_per_run")}'
                              for m in grouped)
                  + ' m²). Their "identifiable" figures are in their own set: per group (or '
                  'side) the mass error and the norm of the 3-D COM error, against the truth\'s '
                  'grouped parameters (mirrored set: the mean of left and mirrored right), in '
                  'the combinations their own uncertainty (on the grouped core) calls '
                  'identifiable.']
    if r.get('zmp_dev_ratio_to_floor'):
        lines += ['', 'ZMP deviation / the truth\'s own (exact sensors): ' + ', '.join(
            f'{label(m)} {v:.2f}' for m, v in r['zmp_dev_ratio_to_floor'].items()
            if not m.startswith('cad')) + '.']
    if r.get('best_ft_method'):
        m = r['best_ft_method']
        t = r['methods'][m]
        lines += ['', f'Best method with the ankle F/T (issue 14): {label(m)}, identifiable '
                  f'mass error max {t["mass_err_pct_max_identifiable"]:.2f} %, COM error max '
                  f'{t["com_err_mm_max_identifiable"]:.2f} mm (per group: mass '
                  + ', '.join(f'{k} {v:+.2f}' for k, v in t['mass_err_pct_identifiable'].items())
                  + ' %; COM ' + ', '.join(f'{k} {v:.2f}'
                                          for k, v in t['com_err_mm_identifiable'].items())
                  + ' mm).']
    if 'zmp_newton_ft' in r['methods']:
        lines += ['', '"+ ankle F/T foot": the swinging foot weighed by MuJoCo\'s ankle '
                  'force/torque sensor (`core/identification/rows/foot_ft.py`), then ZMP Newton '
                  'with that foot mass held (`legid identify --foot-from-ft`): the one mass the '
                  'ZMP cannot see comes from the sensor that can.']
    lines += ['', 'Reduced set, mean +/- std over the runs (lc [mm], m [kg]):', '',
              '| set | ' + ' | '.join(names) + ' |', '|---' * (len(names) + 1) + '|']
    scale = [1e3] * half + [1.0] * half
    lines.append('| MuJoCo truth | ' + ' | '.join(
        f'{v * s:.2f}' for v, s in zip(r['phi_true'], scale)) + ' |')
    lines.append('| CAD | ' + ' | '.join(f'{v * s:.2f}' for v, s in zip(r['phi_cad'], scale))
                 + ' |')
    for m, t in r['methods'].items():
        if m.startswith('cad'):
            continue
        lines.append(f'| {label(m)} | ' + ' | '.join(
            f'{a * s:.2f}+/-{b * s:.2f}' for a, b, s in zip(t['phi_mean'], t['phi_std'], scale))
            + ' |')
    lines += ['', 'Checks (the issue\'s figures; `passed` = all of them): ' + ', '.join(
        f'{k}: {"yes" if v else "NO"}' for k, v in r['checks'].items()), '']
    if r.get('info_checks'):
        lines += ['Further checks (not in `passed`): ' + ', '.join(
            f'{k}: {"yes" if v else "NO"}' for k, v in r['info_checks'].items()), '']
    notes = [f'{label(m)}: {"; ".join(t["notes"])}' for m, t in r['methods'].items()
             if t['notes']]
    if notes:
        lines += ['Notes: ' + ' / '.join(notes), '']
    return '\n'.join(lines)
