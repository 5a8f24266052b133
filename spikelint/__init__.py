"""spikelint: a policy linter and CI gate for GPU training workloads."""

__version__ = "0.2.0"
