"""Paths every suite shares.

pytest runs with --import-mode=importlib, which does not put test folders on sys.path; helpers
shared across suites live in tests/support/ and are imported by name, so that folder is added here.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))
