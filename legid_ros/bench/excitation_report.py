"""Report of ``legid bench excitation``: excitation.md."""

from __future__ import annotations

from pathlib import Path

from legid_ros.core.atomic_files import write_text

KEYS = ('design_s', 'identifiable_fraction_predicted', 'standing_fraction_predicted',
        'identifiable_fraction_static_max', 'identifiable_fraction',
        'mass_err_pct_max_identifiable', 'com_err_mm_max_identifiable', 'link_mass_err_pct_median',
        'fell', 'slip_mm_max', 'limit_violations', 'self_collisions')


def _fmt(v) -> str:
    if v is None:
        return 'n/a'
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f'{v:.3g}'
    return str(v)


def write_report(results: dict, out: Path) -> None:
    """Write ``excitation.md`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    robots = results['robots']
    lines = ['# Designed excitation, executed in MuJoCo and identified (`legid bench excitation`)',
             '', f'Command: `legid bench excitation --duration {results["duration_s"]:g}'
             + (f' --budget {results["budget_s"]:g}' if results.get('budget_s') is not None
                else '') + f'`; parameter set {results["param_set"]}; '
             f'targets {results["targets"]}', '',
             '| figure | ' + ' | '.join(robots) + ' |',
             '|---|' + '---|' * len(robots)]
    for key in KEYS:
        lines.append(f'| {key} | ' + ' | '.join(_fmt(r.get(key)) for r in robots.values())
                     + ' |')
    lines += ['', f'passed: {results["passed"]}', '']
    lines += _locomotion(results.get('locomotion') or {})
    write_text(out / 'excitation.md', '\n'.join(lines))


LOCO_KEYS = ('robot', 'duration_s', 'fell', 'fell_at_s', 'slip_mm_max', 'transition_s',
             'samples', 'link_mass_err_pct_median', 'link_com_err_mm_median',
             'identifiable_fraction', 'dev_ratio_to_truth', 'urdf_dev_ratio_to_truth')


def _locomotion(block: dict) -> list:
    """The locomotion section: the figures, then one column per run."""
    lines = ['## Locomotion as excitation', '']
    if block.get('not_run'):
        return lines + [f'not run: {block["not_run"]}', '']
    lines += [f'trot_fell {_fmt(block.get("trot_fell"))}, stepping_fell '
              f'{_fmt(block.get("stepping_fell"))}, locomotion_dev_ratio_to_truth '
              f'{_fmt(block.get("locomotion_dev_ratio_to_truth"))} (targets '
              f'{block.get("targets")}); passed: {block.get("passed")}', '']
    runs = {k: v for k, v in block.items() if isinstance(v, dict) and 'robot' in v}
    lines += ['| figure | ' + ' | '.join(runs) + ' |', '|---|' + '---|' * len(runs)]
    for key in LOCO_KEYS:
        lines.append(f'| {key} | ' + ' | '.join(_fmt(r.get(key)) for r in runs.values()) + ' |')
    lines.append('| dev_ratio_to_truth at the bench\'s --reg (beside the figure) | ' + ' | '.join(
        _fmt((r.get('bench_reg') or {}).get('dev_ratio_to_truth')) for r in runs.values())
        + ' |')
    lines.append('| dev_ratio_to_truth online (replay -> buffer -> estimator; beside) | '
                 + ' | '.join(_fmt((r.get('online') or {}).get('dev_ratio_to_truth'))
                              for r in runs.values()) + ' |')
    falls = block.get('falls_over_truths') or {}
    if falls:
        lines += ['', 'Beside the figures (one truth each), each gait simulated on other truths: '
                  + '; '.join(f'{k} fell on {f["falls"]} of {f["of"]} (seeds '
                              f'{f["seeds"][0]}-{f["seeds"][-1]}'
                              + (': ' + ', '.join(str(s) for s, x in zip(f['seeds'], f['fell'])
                                                  if x) if f['falls'] else '') + ')'
                              for k, f in falls.items())]
    return lines + ['']
