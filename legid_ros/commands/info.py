"""``legid info``: topics, types, counts, rates and time span of a rosbag2."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``legid info``."""
    parser.add_argument('bag', help='bag directory (or its storage file)')
    parser.add_argument('--json', action='store_true', help='print JSON instead of a table')


def run(args: argparse.Namespace) -> int:
    """Print the bag summary."""
    from legid_ros.bag.recording_io import bag_info

    info = bag_info(args.bag)
    text = (json.dumps(dict(asdict(info), duration_s=info.duration_s), indent=2) if args.json
            else info.table())
    try:
        print(text, flush=True)
    except BrokenPipeError:  # e.g. piped into head: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
