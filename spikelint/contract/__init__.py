"""The run contract as data: its JSON Schema, reading a run config, schema violations with positions.

Both the SPK8xx checks and the ``precheck``/``verify-run`` commands use these, so they sit below
the checks; the commands themselves stay in ``run/``.
"""
