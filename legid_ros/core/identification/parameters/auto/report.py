"""The auto set's selection as text: a terminal table and a Markdown table.

Both read the plain form of a selection
(:meth:`legid_ros.core.identification.parameters.auto.select.Selection.as_info`), the one
``IdentResult.info['auto_selection']`` and ``parameters.yaml`` carry.
"""

from __future__ import annotations

from typing import List


def _test_text(t: dict) -> str:
    p = f' p={t["p_value"]:.2g}' if t.get('p_value') is not None else ''
    alike = (f', fits alike: {" or ".join(t["alike"])}' if t.get('alike') else '')
    alike += f', with {t["paired_with"]}' if t.get('paired_with') else ''
    return (f'{t["level"]}: {t["statistic"]:.3g}{p}, effect {t.get("effect", 0.0):.2g}'
            + (f' (chosen{alike})' if t['accepted'] else ''))


def _head(info: dict) -> str:
    if info['criterion'] == 'f_test':
        return (f'F-test, effective rows {info["n_eff"]:.0f} of {info["n_rows"]}, level '
                f'{info["alpha"]:g} (Bonferroni over each step\'s candidates)')
    return f'held-out blocks, z {info["alpha"]:g}'


def selection_lines(info: dict) -> List[str]:
    """Terminal table of a selection's plain form (:meth:`Selection.as_info`): per unit the
    level chosen and each level tried with its statistic (F, or z of the held-out
    decrease), p-value and effect (change in tolerances)."""
    rows = [f'parameter set chosen by the data ({_head(info)}):']
    for entry in info['table']:
        tests = '; '.join(_test_text(t) for t in entry['tests'])
        rows.append(f'  {entry["unit"]:<12} {entry["chosen"]:<16} {tests}')
    return rows


def _accepted(t: dict) -> str:
    if not t['accepted']:
        return 'no'
    return 'yes' + (f' (fits alike: {", ".join(t["alike"])})' if t.get('alike') else '') + (
        f' (with {t["paired_with"]}: a two-unit move)' if t.get('paired_with') else '')


def selection_markdown(info: dict) -> str:
    """The same as a Markdown table (for ``report.md``)."""
    stat = 'F' if info['criterion'] == 'f_test' else 'z'
    lines = [_head(info) + '.', '', f'| group | chosen | level tried | {stat} | p | effect '
             '[tolerances] | accepted |', '|---|---|---|---|---|---|---|']
    for entry in info['table']:
        for t in entry['tests'] or [{'level': '-', 'statistic': float('nan'), 'p_value': None,
                                     'effect': float('nan'), 'accepted': False}]:
            p = f'{t["p_value"]:.2g}' if t.get('p_value') is not None else '-'
            lines.append(f'| {entry["unit"]} | {entry["chosen"]} | {t["level"]} | '
                         f'{t["statistic"]:.3g} | {p} | {t.get("effect", 0.0):.2g} | '
                         f'{_accepted(t)} |')
    return '\n'.join(lines)
