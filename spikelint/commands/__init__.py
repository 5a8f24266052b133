"""Subcommands beyond ``check`` that the CLI dispatches to: ``init``, ``explain``/``rules``, ``--diff``."""
