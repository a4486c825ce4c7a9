"""Identification of a geared fixed-base leg (seeds 001 and 003)."""

from legid_ros.core.leg_ident.result import LegIdentResult

__all__ = ['LegIdentResult']
