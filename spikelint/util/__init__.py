"""Foundation pieces every layer may use: lazy regexes, escaping, safe writes, package data.

Nothing here imports another part of spikelint, so any module can depend on it.
"""
