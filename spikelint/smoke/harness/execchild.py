"""A training process in a fresh interpreter (``--restart exec``, and the fork default's exec check).

A forked child shares what the parent did at import time: the job module imported once, its
module-level RNG draws, the string-hash seed, object addresses. A real restart has none of
that, so this entry point imports the job again and starts from nothing but the config file
and the checkpoint folder.

Usage (started by the parent only): ``python -m spikelint.smoke.harness.execchild CONFIG RANK REPORT_FD
CONTROL_FD STARTED``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback
from typing import Sequence

EXIT_INTERNAL = 70


def main(argv: Sequence[str]) -> int:
    config_path, rank_text, report_text, control_text, started_text = argv
    report_fd, control_fd, rank = int(report_text), int(control_text), int(rank_text)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    from spikelint.smoke.harness.protocol import ERROR
    from spikelint.smoke.harness.protocol import ChildChannel

    channel = ChildChannel(report_fd, control_fd, rank)
    try:
        from spikelint.smoke.harness.child import TrainingProcess
        from spikelint.smoke.harness.child import config_from_json
        from spikelint.smoke.harness.job import JobError
        from spikelint.smoke.harness.job import resolve_job

        with open(config_path, encoding="utf-8") as handle:
            data = json.load(handle)
        try:
            job = resolve_job(data.get("job_spec"), int(data["steps"]))
        except JobError as error:
            channel.send(ERROR, stage="import the job in a fresh interpreter", message=str(error))
            return 1
        config = config_from_json(data, job.factory)
    except Exception as error:  # noqa: BLE001 - reported to the parent, traceback in the log
        traceback.print_exc()
        channel.send(ERROR, stage="start a fresh interpreter", message=f"{type(error).__name__}: {error}")
        return EXIT_INTERNAL
    return TrainingProcess(config, rank, channel, float(started_text)).run()


if __name__ == "__main__":
    code = EXIT_INTERNAL
    try:
        code = main(sys.argv[1:])
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001
            pass
        os._exit(code)
