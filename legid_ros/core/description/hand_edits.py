"""How much a user had to edit by hand: a description against ``legid describe``, a URDF against
the package that installed it.

- :func:`hand_edited_lines`: lines changed, added or removed in a generated description
  (comments not counted).
- :func:`regenerate`: the description the command in a description's first line writes today.
- :func:`urdf_hand_edits`: 0 when a URDF is byte for byte what its installing Python
  distribution recorded (the SHA-256 in the distribution's ``RECORD``), 1 when it differs,
  None when no installed distribution lists it (a user's own URDF: nothing to compare with).
"""

from __future__ import annotations

import base64
import contextlib
import difflib
import hashlib
import io
import shlex
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Optional

from legid_ros.core.errors import BadInputError


def hand_edited_lines(generated: str, edited: str) -> int:
    """Lines changed, added or removed by hand in a generated description (comments excluded).

    Args:
        generated: Text ``legid describe`` writes.
        edited: Text in use.

    Returns:
        Number of non-comment lines only one of the two texts has [-].
    """
    diff = difflib.ndiff(generated.splitlines(), edited.splitlines())
    return sum(1 for line in diff if line[:2] in ('+ ', '- ')
               and not line[2:].lstrip().startswith('#'))


def describe_command(text: str) -> list:
    """The ``legid describe`` command recorded in a description's first line, as arguments.

    Raises:
        BadInputError: The first line holds no ``legid describe`` command.
    """
    first = text.splitlines()[0] if text else ''
    parts = first.split('`')
    if len(parts) < 3:
        raise BadInputError(f'no `legid describe ...` command in the first line: {first!r}')
    command = shlex.split(parts[1])
    if command[:2] != ['legid', 'describe']:
        raise BadInputError(f'the first line names {command[:2]}, not legid describe')
    return command


def regenerate(description: Path, urdf: Path) -> str:
    """What the command in ``description``'s first line writes today for ``urdf``.

    Args:
        description: A description YAML written by ``legid describe`` (maybe edited since).
        urdf: The URDF to pass as ``--urdf`` (the command records the file name only).

    Returns:
        The freshly generated description text.
    """
    from legid_ros.cli import main

    args = describe_command(Path(description).read_text())[1:]
    args[args.index('--urdf') + 1] = str(urdf)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / 'fresh.yaml'
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):  # its report, not the caller's
            code = main(args + ['--out', str(out)])
        if code != 0:
            raise BadInputError(f'legid describe exited with {code} for {description}')
        return out.read_text()


def _record_hash(path: Path) -> Optional[str]:
    """The SHA-256 (urlsafe base64, no padding) an installed distribution recorded for ``path``."""
    target = path.resolve()
    for dist in metadata.distributions():
        for entry in dist.files or ():
            if entry.hash is None or entry.name != target.name:
                continue
            if Path(dist.locate_file(entry)).resolve() == target:
                return entry.hash.value
    return None


def urdf_hand_edits(urdf: Path) -> Optional[int]:
    """0 if ``urdf`` is unmodified since its distribution installed it, 1 if not, None if unknown.

    Args:
        urdf: Path of the URDF in use.
    """
    recorded = _record_hash(Path(urdf))
    if recorded is None:
        return None
    digest = hashlib.sha256(Path(urdf).read_bytes()).digest()
    actual = base64.urlsafe_b64encode(digest).rstrip(b'=').decode()
    return int(actual != recorded)
