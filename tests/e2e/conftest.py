"""Fixtures of the end-to-end tests; the harness lives in lsp_harness.py.

pytest runs with --import-mode=importlib, which does not put test folders on sys.path; the
test modules import their shared harness by name, so this folder is added here.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsp_harness import client  # noqa: E402, F401  (the pytest-lsp fixture, one per client profile)
