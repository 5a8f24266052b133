"""The line protocol between a training process and the parent.

Child to parent: one JSON object per line on a pipe (``{"type": "step", "step": 5, ...}``).
Parent to child: a line ``go`` releases a child that holds at a step or pauses inside a
checkpoint write. A pipe per process keeps the ranks' lines apart, and the end of a pipe
tells the parent that the process is gone even before it is reaped.
"""

from __future__ import annotations

import json
import os
from typing import Any

READY = "ready"
STEP = "step"
PROBE = "probe"
CHECKPOINT = "checkpoint"
WRITING = "writing"
HOLD = "hold"
RESTORED = "restored"
PREEMPTED = "preempted"
DONE = "done"
ERROR = "error"
HANDLER = "handler"  # the job replaced the SIGTERM handler
NONDETERMINISTIC = "nondeterministic"  # warn-only mode: an op without a deterministic implementation ran

RELEASE = b"go\n"
EXIT_PREEMPTED = 143  # 128 + SIGTERM, what Kubernetes and Lightning expect after a graceful stop
EXIT_NO_CHECKPOINT = 3


def encode(message_type: str, fields: dict[str, Any]) -> bytes:
    return (json.dumps({"type": message_type, **fields}, separators=(",", ":")) + "\n").encode("utf-8")


class LineBuffer:
    """Bytes in, complete JSON messages out (a partial last line waits for the rest)."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        self._pending += data
        *lines, self._pending = self._pending.split(b"\n")
        messages = []
        for line in lines:
            if line.strip():
                try:
                    messages.append(json.loads(line))
                except ValueError:
                    messages.append({"type": ERROR, "message": f"unreadable protocol line {line[:200]!r}"})
        return messages


class ChildChannel:
    """The training process's end of both pipes."""

    def __init__(self, report_fd: int, control_fd: int, rank: int) -> None:
        self._report_fd = report_fd
        self._control_fd = control_fd
        self.rank = rank

    def send(self, message_type: str, **fields: Any) -> None:
        data = encode(message_type, {"rank": self.rank, **fields})
        view = memoryview(data)
        while view:
            written = os.write(self._report_fd, view)
            view = view[written:]

    def wait_for_release(self) -> bool:
        """Block until the parent says ``go``; ``False`` when the parent is gone."""
        received = b""
        while not received.endswith(b"\n"):
            chunk = os.read(self._control_fd, 64)
            if not chunk:
                return False
            received += chunk
        return True
