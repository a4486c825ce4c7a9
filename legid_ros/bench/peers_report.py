"""Markdown tables of ``legid bench peers`` (:mod:`legid_ros.bench.peers`)."""

from __future__ import annotations


def _f(x, fmt='{:.2f}') -> str:
    return '-' if x is None else fmt.format(x)


def _table(header, rows) -> str:
    out = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    out += ['| ' + ' | '.join(str(c) for c in r) + ' |' for r in rows]
    return '\n'.join(out)


def _case_rows(c: dict) -> list:
    t, w, k, p, u = (c['torque_rel_rms_pct_mean'], c['wall_s'], c['consistent'],
                     c['param_err_pct'], c['cpu_s'])
    r = c['ratio_ours_over_figaroh']
    return [[c['name'], f"legid_ros ({c['ours_method']})", _f(t['ours']), _f(p['ours']),
             k['ours'], _f(w['ours'], '{:.3f}'), _f(u['ours'], '{:.3f}')],
            [c['name'], f"FIGAROH ({c['figaroh_variant']})", _f(t['figaroh']),
             _f(p['figaroh']), k['figaroh'], _f(w['figaroh'], '{:.3f}'),
             _f(u['figaroh'], '{:.3f}')],
            [c['name'], 'ratio ours / FIGAROH', _f(r['torque_rel_rms_pct_mean']),
             _f(r['param_err_pct'], '{:.3f}'), '', _f(r['wall_s']), _f(r['cpu_s'])]]


def markdown(r: dict) -> str:
    """The benchmark's tables as Markdown."""
    lines = [f"# legid bench peers: legid_ros vs FIGAROH {r['figaroh_version']} "
             '(same MuJoCo recordings)', '',
             'Held-out relative RMS torque error (mean over joints), torque-weighted '
             'rigid-parameter error against the truth, physical consistency, wall time. '
             "FIGAROH's figure is its best variant on held-out torque.", '']
    compared = [c for c in r['cases'] if c.get('torque_rel_rms_pct_mean')]
    rows = []
    for c in compared:
        rows += _case_rows(c)
    lines.append(_table(['case', 'tool', 'held-out torque err [%]', 'param err [%]',
                         'consistent', 'wall [s]', 'CPU [s]'], rows))
    for c in compared:
        lines += ['', f"## {c['name']}: per joint held-out error [%]", '',
                  _table(['tool'] + c['joints'],
                         [['legid_ros'] + [_f(x) for x in c['torque_rel_rms_pct']['ours']],
                          ['FIGAROH'] + [_f(x) for x in
                                         (c['torque_rel_rms_pct']['figaroh']
                                          or [None] * len(c['joints']))]]),
                  '', 'Every method and variant:', '',
                  _table(['tool', 'method', 'status', 'torque err [%]', 'param err [%]',
                          'consistent', 'wall [s]', 'CPU [s]'],
                         [['legid_ros', k, 'ok', _f(_mean(v.get('torque_rel_rms_pct'))),
                           _f(v.get('param_err_pct')), v.get('consistent'),
                           _f(v.get('wall_s'), '{:.3f}'), _f(v.get('cpu_s'), '{:.3f}')]
                          for k, v in c['methods']['ours'].items()]
                         + [['FIGAROH', k, v['status'], _f(_mean(v.get('torque_rel_rms_pct'))),
                             _f(v.get('param_err_pct')), v.get('consistent'),
                             _f(v.get('wall_s'), '{:.3f}'), _f(v.get('cpu_s'), '{:.3f}')]
                            for k, v in c['methods']['figaroh'].items()]),
                  '', f"Aims: {c.get('aims')}. {c.get('note', '')}"]
    for c in r['cases']:
        if c.get('status') == 'unsupported':
            lines += ['', f"## {c['name']}: unsupported by FIGAROH", '',
                      c['figaroh']['reason'] + '.']
    lines += ['', f"Left out of FIGAROH: {r['figaroh_left_out']}.", '',
              f"Command: `{r['command']}` ({r['seconds']} s). Passed: {r['passed']}."]
    return '\n'.join(lines)


def _mean(x):
    return None if not x else sum(x) / len(x)
