"""``spikelint history``: secrets in the lines each commit of a range added (see command.py)."""
