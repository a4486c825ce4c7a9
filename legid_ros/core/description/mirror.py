"""Left/right and four-leg groups of links found by mirrored names.

A name is split into tokens at ``_``, ``-``, ``.`` and lower-to-upper case changes; one token
naming a side (``left``/``l``, ``right``/``r``; ``lf``/``fl``, ``rf``/``fr``, ``lh``/``hl``/
``rl``/``bl``, ``rh``/``hr``/``rr``/``br``; any case) makes the name a member of a mirrored
set, keyed by the name with that token replaced. Names whose key is shared by every side of
one layout (both of left/right, or all four legs) form a group.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

BIPED_SIDES = ('left', 'right')
QUAD_SIDES = ('lf', 'rf', 'lh', 'rh')
SIDE_TOKENS = {
    'left': 'left', 'l': 'left', 'lft': 'left', 'right': 'right', 'r': 'right', 'rgt': 'right',
    'lf': 'lf', 'fl': 'lf', 'rf': 'rf', 'fr': 'rf', 'lh': 'lh', 'hl': 'lh', 'rl': 'lh',
    'bl': 'lh', 'rh': 'rh', 'hr': 'rh', 'rr': 'rh', 'br': 'rh',
}
_SPLIT = re.compile(r'([_\-.]+)')


@dataclass(frozen=True)
class Mirrored:
    """A name's side and mirror key.

    Attributes:
        name: The name.
        side: 'left', 'right', 'lf', 'rf', 'lh' or 'rh'.
        key: The name with the side token replaced by ``*`` (lower case).
    """

    name: str
    side: str
    key: str


def _tokens(name: str) -> List[str]:
    """Tokens and separators of a name (separators kept, so the name re-joins)."""
    out = []
    for part in _SPLIT.split(name):
        if _SPLIT.fullmatch(part) or not part:
            out.append(part)
        else:
            out += [p for p in re.split(r'(?<=[a-z0-9])(?=[A-Z])', part) if p]
    return out


def mirrored(name: str) -> Optional[Mirrored]:
    """The side and mirror key of a name, or None if no single token names a side."""
    toks = _tokens(name)
    hits = [i for i, t in enumerate(toks) if t.lower() in SIDE_TOKENS]
    if not hits:
        return None
    # prefer a leg token (lf, FL, ...) over a bare l/r, and the first of equals
    i = sorted(hits, key=lambda k: (SIDE_TOKENS[toks[k].lower()] in BIPED_SIDES, k))[0]
    side = SIDE_TOKENS[toks[i].lower()]
    key = ''.join('*' if k == i else t for k, t in enumerate(toks)).lower()
    return Mirrored(name, side, key)


def group_name(key: str) -> str:
    """Readable group name of a mirror key ('leg_*_1_link' -> 'leg_1')."""
    parts = [p for p in re.split(r'[_\-.*]+', key) if p and p not in ('link', 'joint')]
    return '_'.join(parts) or 'group'


def find_groups(names: Sequence[str]) -> Tuple[Dict[str, Dict[str, str]], List[str]]:
    """Mirrored groups among names.

    Returns:
        (groups: group name -> {side: name} with every side of its layout, names in no group).
    """
    by_key: Dict[str, Dict[str, str]] = {}
    for name in names:
        m = mirrored(name)
        if m is not None:
            by_key.setdefault(m.key, {})[m.side] = name
    groups, used = {}, set()
    for key, sides in by_key.items():
        for layout in (QUAD_SIDES, BIPED_SIDES):
            if set(layout) <= set(sides):
                gname = group_name(key)
                while gname in groups:
                    gname += '_'
                groups[gname] = {s: sides[s] for s in layout}
                used.update(groups[gname].values())
                break
    return groups, [n for n in names if n not in used]


def layout_of(sides: Sequence[str]) -> Tuple[str, ...]:
    """The side layout (biped or quadruped) that the given sides belong to."""
    return QUAD_SIDES if set(sides) & set(QUAD_SIDES) else BIPED_SIDES
