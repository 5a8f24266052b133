"""Fixtures for tests/core (helpers live in core_support.py, importable by name from the tests)."""

from core_support import run_cli  # noqa: F401
