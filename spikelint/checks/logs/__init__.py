"""Checks of the log rules (``rules/logs.yaml``, SPK5xx): pipelines that hide a failure or a log, and where a run's log goes."""
