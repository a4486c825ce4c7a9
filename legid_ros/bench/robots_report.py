"""Report of ``legid bench robots``: robots.md and robots_zmp.png (validation ZMP traces)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from legid_ros.core.atomic_files import write_text


def _fmt(v, nd: int = 2) -> str:
    if v is None:
        return 'n/a'
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return f'{v:.{nd}f}' if np.isfinite(v) else 'nan'


def _plot(results: dict, path: Path) -> None:
    """Measured and model ZMP/CoP of each robot's validation run (first 10 s)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    robots = {n: r['_traces'] for n, r in results['robots'].items() if '_traces' in r}
    if not robots:
        return
    fig, axes = plt.subplots(len(robots), 2, figsize=(11, 3.2 * len(robots)), squeeze=False)
    for row, (name, tr) in zip(axes, robots.items()):
        t = tr['t'] - tr['t'][0]
        keep = t <= 10.0
        for j, ax in enumerate(row):
            ax.plot(t[keep], 1e3 * tr['measured'][keep, j], 'k', lw=1.2, label='measured')
            for label, style in (('urdf', ':'), ('truth', '--')):
                ax.plot(t[keep], 1e3 * tr[label][keep, j], style, lw=1, label=label)
            for label in tr:
                if label not in ('t', 'measured', 'urdf', 'truth'):
                    ax.plot(t[keep], 1e3 * tr[label][keep, j], lw=1, label=label)
            ax.set_title(f'{name}: ZMP {"xy"[j]}')
            ax.set_xlabel('time [s]')
            ax.set_ylabel('[mm]')
        row[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(results: dict, out: Path) -> None:
    """Write ``robots.md`` and ``robots_zmp.png`` into ``out``; drop the traces from results."""
    out.mkdir(parents=True, exist_ok=True)
    try:
        _plot(results, out / 'robots_zmp.png')
    finally:
        for r in results['robots'].values():
            r.pop('_traces', None)
    t = results['targets']
    lines = ['# Robots we did not design (`legid bench robots`)', '',
             'Command: `legid bench robots`', '',
             f'Parameter set: {results["param_set"]}; targets per robot: ZMP deviation / the '
             f'truth\'s <= {t["zmp_dev_ratio_to_truth"]}, identifiable mass <= '
             f'{t["mass_err_pct_max_identifiable"]} %, COM <= {t["com_err_mm_max_identifiable"]}'
             f' mm, URDF edits {t["urdf_hand_edits"]}, description edits <= '
             f'{t["description_hand_edited_lines"]} lines.', '',
             '| robot | feet | joints (locked) | URDF edits | description edits | ZMP dev truth '
             '[mm] | URDF / truth | best method | identified / truth | mass err max ident. [%] '
             '| COM err max ident. [mm] |', '|' + '---|' * 11]
    for name, r in results['robots'].items():
        feet = ', '.join(f'{f} {k}' for f, k in r['feet'].items())
        lines.append(
            f'| {name} | {feet} | {r["joints"]} ({r["locked_joints"]}) | '
            f'{_fmt(r["urdf_hand_edits"])} | {_fmt(r["description_hand_edited_lines"])} | '
            f'{_fmt(r["zmp_dev_truth_mm"], 3)} | {_fmt(r["urdf_zmp_dev_ratio_to_truth"])} | '
            f'{r["best_method"]} | {_fmt(r["zmp_dev_ratio_to_truth"])} | '
            f'{_fmt(r["mass_err_pct_max_identifiable"])} | '
            f'{_fmt(r["com_err_mm_max_identifiable"])} |')
    lines += ['', 'Per method: validation ZMP deviation [mm] and its ratio to the truth\'s; mass '
              '[%] and COM [mm] errors in the combinations the estimate\'s own uncertainty '
              'calls identifiable (n/a: no uncertainty in this set), then over every link '
              '(most are not identifiable from standing data); online = replay -> buffer -> '
              'estimator; z: the largest |error| / std along the combinations determined within '
              '2 % / 3 mm (how many).', '',
              '| robot | method | ZMP dev [mm] | ratio | mass ident. [%] | COM ident. [mm] | '
              'mass all [%] | COM all [mm] | z (determined) | time [s] | note |',
              '|' + '---|' * 11]
    for name, r in results['robots'].items():
        for m, e in r['methods'].items():
            lines.append(f'| {name} | {m} | {_fmt(e.get("zmp_dev_mm"), 3)} | '
                         f'{_fmt(e.get("zmp_dev_ratio_to_truth"))} | '
                         f'{_fmt(e.get("mass_err_pct_max_identifiable"))} | '
                         f'{_fmt(e.get("com_err_mm_max_identifiable"))} | '
                         f'{_fmt(e.get("mass_err_pct_max_all"))} | '
                         f'{_fmt(e.get("com_err_mm_max_all"))} | '
                         f'{_fmt(e.get("z_max_determined"))} '
                         f'({e.get("determined_combinations", "-")}) | '
                         f'{_fmt(e.get("time_s"), 1)} | '
                         f'{e.get("error", "")[:80]} |')
    for name, r in results['robots'].items():
        lines += ['', f'{name}: not identifiable (listed, not counted): '
                  + (', '.join(r.get('not_identifiable_combinations') or []) or 'none'),
                  f'{name}: truth: {r["truth"]}']
    lines += ['', f'passed: {results["passed"]}', '', '![validation ZMP](robots_zmp.png)', '']
    write_text(out / 'robots.md', '\n'.join(lines))
