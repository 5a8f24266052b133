"""Checks of the meta rules (``rules/meta.yaml``, SPK0xx): values no consumer can hold (SPK001), and the
Helm templates and image parts left unread (SPK003); the readers and the engine report the rest of SPK001–SPK003."""
