"""Checks of the capacity rules (``rules/capacity.yaml``, SPK7xx): what a workload takes of the cluster, and for how long."""
