"""Markdown report of ``legid bench feedforward`` (see :mod:`legid_ros.bench.feedforward`)."""

from __future__ import annotations

from pathlib import Path


def markdown(out: dict) -> str:
    """The benchmark's results dict (see :func:`legid_ros.bench.feedforward.run`) as Markdown.

    Tracking errors [rad] per case and joint, max-error reductions [%], tau_ff compute time
    [us], the controller node's timer jitter [ms], the biped swing leg and the checks.
    """
    names = out['joint_names']
    lines = ['# Feedforward benchmark (MuJoCo leg3, protocol of Xiao, Qian & Luo 2025)', '',
             f'Command: `{out["command"]}` ({out["wall_s"]:.0f} s wall). Validation: '
             f'{out["duration_s"]:.0f} s, gains Kp {out["gains"]["kp"]}, Kd {out["gains"]["kd"]}; '
             f'plant friction: description law x{out["plant_friction"]["scale"]:g}, Coulomb '
             f'{out["plant_friction"]["coulomb"]}.', '',
             '| case | ' + ' | '.join(f'max err {n} [rad]' for n in names) + ' | '
             + ' | '.join(f'RMS {n} [rad]' for n in names) + ' |',
             '|---' * (1 + 2 * len(names)) + '|']
    for case in ('pd', 'cv', 'two_step'):
        mx, rms = out['max_err_rad'][case], out['rms_err_rad'][case]
        lines.append(f'| {case} | ' + ' | '.join(f'{mx[n]:.5f}' for n in names) + ' | '
                     + ' | '.join(f'{rms[n]:.5f}' for n in names) + ' |')
    lines += ['', 'Two-step max-error reduction vs PD only: ' + ', '.join(
        f'{n} {100 * v:.1f} %' for n, v in out['reduction_vs_pd'].items()),
        'Two-step max-error reduction vs CV feedforward: ' + ', '.join(
        f'{n} {100 * v:.1f} %' for n, v in out['reduction_vs_cv'].items()), '',
        f'tau_ff compute time per cycle: median {out["tau_ff_us_median"]:.1f} us, '
        f'p99 {out["tau_ff_us_p99"]:.1f} us.']
    for nd in out.get('node_runs', []):
        sched = (f'SCHED_FIFO {nd["sched_fifo_priority"]}' if nd['sched_fifo_priority']
                 else 'normal scheduling')
        lines.append(f'Controller node 1 kHz wall timer ({nd["executor"]}, {sched}): '
                     f'{nd["rate_hz"]:.0f} '
                     f'Hz achieved, jitter p50 {nd["loop_jitter_ms_p50"]:.3f} ms, p99 '
                     f'{nd["loop_jitter_ms_p99"]:.3f} ms, max {nd["loop_jitter_ms_max"]:.3f} ms.')
    if 'biped_swing' in out:
        bs = out['biped_swing']
        lines += ['', 'Biped swing leg (trunk fixed), max error [rad]:', '',
                  '| case | ' + ' | '.join(bs['joint_names']) + ' |',
                  '|---' * (1 + len(bs['joint_names'])) + '|']
        for case, row in bs['max_err_rad'].items():
            lines.append(f'| {case} | ' + ' | '.join(f'{row[j]:.2e}' for j in bs['joint_names'])
                         + ' |')
    lines += ['', 'Checks: ' + ', '.join(f'{k} {"ok" if v else "NOT reached"}'
                                         for k, v in out['checks'].items()), '']
    if 'floating' in out:
        lines += floating_lines(out)
    return '\n'.join(lines)


def floating_lines(out: dict) -> list:
    """The standing biped's section (keys ``floating`` and ``floating_meta``)."""
    fl, meta = out['floating'], out.get('floating_meta', {})
    joints = meta.get('stance_leg_joints') or [j for j in fl['max_err_rad']['pd'] if j != 'max']
    ident = meta.get('identification', {})
    gains = meta.get('gains', {})
    lines = ['## Standing biped, floating base (MuJoCo, out-of-model truth)', '',
             f'Stand, weight shift, left-foot lift, {meta.get("single_support_s", 0):g} s of '
             f'the single-support excitation of Wu & Gao 2021; PD Kp {gains.get("kp")} N.m/rad, '
             f'Kd {gains.get("kd")} N.m.s/rad on every joint; identified parameters: '
             f'{ident.get("method")} (consistent: {ident.get("consistent")})'
             + ''.join(f'; {label}: online estimator, {live.get("param_set")} set (consistent: '
                       f'{live.get("consistent")})'
                       for label, live in (ident.get('live') or {}).items())
             + '. Max error of the stance (right) leg during single support [rad]:', '',
             '| case | ' + ' | '.join(joints) + ' | max |', '|---' * (2 + len(joints)) + '|']
    for case, row in fl['max_err_rad'].items():
        lines.append(f'| {case} | ' + ' | '.join(f'{row[j]:.2e}' for j in joints)
                     + f' | {row["max"]:.2e} |')
    for key in [k for k in meta if k.startswith('ratio_') and '_vs_' in k]:
        label = ' / '.join(key[len('ratio_'):].rsplit('_vs_', 1))
        lines.append(f'| {label} | ' + ' | '.join(f'{meta[key][j]:.2f}' for j in joints)
                     + ' | |')
    lines += ['', f'Feedforward compute time incl. contact QP: median {fl["tau_ff_us_median"]:.0f}'
              f' us (single support {meta.get("tau_ff_us_median_single", float("nan")):.0f} us, '
              f'double support {meta.get("tau_ff_us_median_double", float("nan")):.0f} us, p99 '
              f'{meta.get("tau_ff_us_p99", float("nan")):.0f} us). Fell: {fl["fell"]}.']
    if 'checks' in meta:
        lines += ['', 'Floating checks: ' + ', '.join(
            f'{k} {"ok" if v else "NOT reached"}' for k, v in meta['checks'].items())]
    return lines + ['']


def write_floating_markdown(out: dict, path: Path) -> None:
    """Write the floating section alone (``--only floating``) to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cmd = out.get('floating_meta', {}).get('command', '')
    path.write_text('# Feedforward benchmark, floating part\n\n'
                    + (f'Command: `{cmd}`.\n\n' if cmd else '')
                    + '\n'.join(floating_lines(out)))


def write_markdown(out: dict, path: Path) -> None:
    """Write :func:`markdown` of ``out`` to ``path`` (parent directories created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(markdown(out))
