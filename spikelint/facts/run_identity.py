"""Launch time and run identity: does a path change with each launch, or name one run?

A checkpoint folder built from the launch time is new on every restart (nothing to resume from);
one that names the run (a job id, ``run-3``) is kept apart from other runs.
"""

from __future__ import annotations

import re
from typing import Iterable

from spikelint.util.lazyre import lazy_regex
from spikelint.model import Located


TIMESTAMP = lazy_regex(
    r"\$\{now:|\$\(\s*date\b|`\s*date\b|"
    r"\{(?:timestamp|time_?stamp|datetime|date|time|now|start_time|launch_time)(?::[^{}]*)?\}|"
    r"%[Yy][^/%]{0,3}%[mdbBj]|%[mdHMS][-_:.]?%[dHMSM]|%Y|"
    r"datetime\.now\(|time\.strftime\(|strftime\(")
RUN_IDENTITY = lazy_regex(
    r"\$\{?\(?[A-Z0-9_]*(?:JOB|RUN|EXPERIMENT|EXP|TRIAL|WORKLOAD|TASK)_?(?:NAME|ID|UUID)\b|"
    r"\$\{(?:oc\.env:|env:)?[^}]*(?:job|run|experiment|exp|trial)[._]?(?:name|id|uuid)[^}]*\}|"
    r"(?:^|[/_.-])(?:r|run|rev|trial|attempt|exp|job)[-_]?\d+(?=$|[/_.-])",
    re.IGNORECASE)


def timestamp_sources(sources: Iterable[tuple[Located, str]]) -> list[tuple[Located, str]]:
    """The written texts among ``sources`` that build a value from the launch time."""
    return [(where, text) for where, text in sources if isinstance(text, str) and TIMESTAMP.search(text)]


def names_run(text: str, names: Iterable[str] = ()) -> bool:
    """A path that names one run: a run/job id variable, a ``-r5``/``run-3`` suffix, or the run's name."""
    if RUN_IDENTITY.search(text):
        return True
    parts = {part for part in re.split(r"[/]", text) if part}
    return any(name and name in parts for name in names)
