"""Checks of the storage rules (``rules/storage.yaml``, SPK3xx): training output that vanishes with the pod."""
