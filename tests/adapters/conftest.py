"""Fixtures for tests/adapters (helpers live in adapter_support.py, importable by name from the tests)."""

from adapter_support import workloads  # noqa: F401
from adapter_support import workload  # noqa: F401
