"""Open any rosbag2 a path names: ``rosbags``' Reader first; for an MCAP bag it cannot open
(a file cut short by a power loss, several storage files without ``metadata.yaml``, a file
without suffix) the sequential scan of :mod:`legid_ros.bag.repair`, which keeps what the
files still hold and says, in one warning line, what was lost.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, TypeVar, Union

from rosbags.rosbag2 import Reader

from legid_ros.bag.discover import BagSource, locate_bag
from legid_ros.bag.repair import NotMcapError, ScannedMcap
from legid_ros.core.errors import BadInputError

LOG = logging.getLogger(__name__)
T = TypeVar('T')
_WARNED: Dict[tuple, bool] = {}  # damaged bags warned about, oldest first
_WARNED_MAX = 64


def open_reader(source: BagSource):
    """A reader of the bag: ``rosbags``' Reader, or for an MCAP bag it cannot open (a file
    cut short, no ``metadata.yaml`` beside several files) a :class:`ScannedMcap`.

    Raises:
        BadInputError: Unreadable bag.
    """
    error, cause = None, None
    if source.reader_path is not None:
        try:
            reader = Reader(source.reader_path)
            reader.open()
            return reader
        except Exception as exc:  # rosbags raises several unrelated types on bad files
            error, cause = f'cannot read bag {source.path}: {exc}'.splitlines()[0], exc
    if source.storage == 'mcap' and source.files:
        try:
            return _scanned(source)
        except NotMcapError as exc:  # rosbags' reason, if it gave one, tells more
            raise BadInputError(error or f'cannot read bag {source.path}: {exc}') from exc
        except BadInputError as exc:
            raise BadInputError(f'cannot read bag {source.path}: {exc}') from (cause or exc)
    raise BadInputError(error or f'cannot read bag {source.path}') from cause


def _scanned(source: BagSource) -> ScannedMcap:
    """The bag walked by :class:`ScannedMcap`; a one-line warning says what a damaged bag
    lost (once per bag and damage, not on every pass of a looping replay)."""
    reader = ScannedMcap(source)
    if reader.recovery is not None:
        key = (str(source.path), reader.recovery.bytes_total, reader.recovery.messages)
        if key not in _WARNED:
            if len(_WARNED) >= _WARNED_MAX:
                _WARNED.pop(next(iter(_WARNED)))
            _WARNED[key] = True
            LOG.warning('%s: %s', source.path, reader.recovery.summary())
    return reader


def read_with(source: BagSource, work: Callable[[Any], T], verb: str = 'read') -> T:
    """``work(reader)`` on the bag. When ``rosbags`` opened an MCAP bag but fails inside it
    (a chunk gone bad under an intact summary), ``work`` runs once more on a
    :class:`ScannedMcap`, which skips what it cannot read.

    Raises:
        BadInputError: Unreadable bag (``work``'s own BadInputError passes through).
    """
    reader = open_reader(source)
    try:
        return work(reader)
    except BadInputError:
        raise
    except Exception as exc:  # corrupt storage: rosbags raises many types
        failure = BadInputError(f'cannot {verb} bag {source.path}: {exc}'.splitlines()[0])
        if isinstance(reader, ScannedMcap) or source.storage != 'mcap' or not source.files:
            raise failure from exc
    finally:
        reader.close()
    try:
        scanned = _scanned(source)
    except BadInputError as exc:
        raise failure from exc
    with scanned:
        try:
            return work(scanned)
        except BadInputError:
            raise
        except Exception as exc:  # corrupt storage the scan did not catch
            raise failure from exc


@contextmanager
def open_bag(path: Union[str, Path]) -> Iterator:
    """Context manager giving a reader of the bag ``path`` names (any form that
    :func:`legid_ros.bag.recording_io.read_bag` accepts): ``rosbags``' Reader, or a
    :class:`ScannedMcap` of what a damaged MCAP holds (``connections``, ``start_time``,
    ``end_time``, ``messages(connections=...)`` in log-time order).

    Raises:
        BadInputError: Missing or unreadable bag.
    """
    reader = open_reader(locate_bag(path))
    try:
        yield reader
    finally:
        reader.close()
