"""Which clock a stream's header stamps come from: one rule for ``legid identify``'s bag
reader, ``legid check`` and the live buffer.

The streams are aligned on their header stamps, so every stream must be stamped from the
joint states' clock. A stream is on another clock when its header stamps minus its receive
times (the bag's log times, or the node's arrival times) differ from the joint states' by more
than :data:`STAMPS_APART_S`: a driver that leaves the stamps at 0, one that runs with
``use_sim_time`` while the others do not, a robot clock counting from boot. Receive latency
(milliseconds, half a second under overload) stays well below it.
"""

from __future__ import annotations

from typing import Optional

STAMPS_APART_S = 1.0  # [s]


def clock_offset_s(stream_offset_s: Optional[float], ref_offset_s: Optional[float]
                   ) -> Optional[float]:
    """How far a stream's clock is from the joint states' [s], when it is another clock.

    Args:
        stream_offset_s: The stream's header stamp minus receive time [s] (median or latest);
            None when its stamps are all 0.
        ref_offset_s: The joint states' [s]; None when they are not stamped either.

    Returns:
        None when the stream is on the joint states' clock; else the offset [s] (``inf`` for a
        stream whose stamps are 0 while the joint states' are not).
    """
    if stream_offset_s is None:
        return None if ref_offset_s is None else float('inf')
    if ref_offset_s is None:
        return None
    off = float(stream_offset_s - ref_offset_s)
    return off if abs(off) > STAMPS_APART_S else None


def describe_offset(offset_s: float) -> str:
    """Words for :func:`clock_offset_s`'s answer ("are 0", "are +1e+03 s from ...")."""
    if offset_s == float('inf'):
        return 'are all 0 (the driver does not stamp)'
    return f"are {offset_s:+.3g} s from the joint states' clock (another clock)"


def offset_label(offset_s: float) -> str:
    """Short form of :func:`clock_offset_s`'s answer for a status line ("stamps 0", "+3 s")."""
    return 'stamps 0' if offset_s == float('inf') else f'{offset_s:+.3g} s'
