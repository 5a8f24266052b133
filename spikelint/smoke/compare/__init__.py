"""Comparing training state: checkpoint layouts read without running their code, leaf-by-leaf digests, the
cause a difference names, and ``spikelint smoke diff``."""
