"""Description errors that name the YAML key at fault and how to fix it."""

from __future__ import annotations

import difflib
from typing import Iterable, Optional

from legid_ros.core.errors import RobotDescriptionError


class DescriptionKeyError(RobotDescriptionError):
    """One key of a description YAML is wrong.

    The message reads ``<key>: <problem>; fix: <fix>`` (and the file, when known).

    Attributes:
        key: Dotted key path at fault (``feet.left.link``, ``locked_joints.head_1_joint``).
        problem: What is wrong.
        fix: What to write instead.
    """

    def __init__(self, key: str, problem: str, fix: str, path: Optional[str] = None):
        super().__init__(f'{key}: {problem}; fix: {fix}', path)
        self.key = key
        self.problem = problem
        self.fix = fix


def suggest(name: str, known: Iterable[str], what: str) -> str:
    """Fix text naming the closest known names (``use one of ...``)."""
    known = list(known)
    close = difflib.get_close_matches(str(name), known, n=3, cutoff=0.5)
    if close:
        return f'did you mean {", ".join(repr(c) for c in close)}? ({len(known)} {what} known)'
    shown = ', '.join(repr(k) for k in known[:8]) + (', ...' if len(known) > 8 else '')
    return f'use one of the {what}: {shown}' if known else f'the model has no {what}'
