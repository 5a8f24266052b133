"""Checks of the run-contract rules (``rules/contract.yaml``, SPK6xx): run configs against their schema, output paths, run identity."""
