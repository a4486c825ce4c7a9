"""Every test module's file name is unique across test/: pytest imports them by basename
(no packages), so a second test_x.py anywhere stops the whole suite at collection."""

from collections import Counter
from pathlib import Path


def test_test_module_names_are_unique():
    """No two test_*.py files under test/ share a name."""
    names = Counter(p.name for p in Path(__file__).parent.rglob('test_*.py'))
    assert [n for n, c in names.items() if c > 1] == []
