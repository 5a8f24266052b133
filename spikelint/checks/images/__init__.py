"""Checks of the image rules (``rules/images.yaml``, SPK1xx): container images and hub references that can change under a run."""
