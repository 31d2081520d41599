"""Fixtures of the end-to-end tests; the harness lives in lsp_harness.py."""

from lsp_harness import client  # noqa: F401  (the pytest-lsp fixture, parametrized per client profile)
