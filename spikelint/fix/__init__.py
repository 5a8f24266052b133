"""Mechanical fixes: a fixer per file kind proposes text edits for findings, the proof step
re-lints the edited text, and only proven edits are written (``spikelint fix``)."""
