"""Checks of the checkpoint rules (``rules/checkpoint.yaml``, SPK4xx): checkpoints that are missing, never resumed, or cannot resume."""
