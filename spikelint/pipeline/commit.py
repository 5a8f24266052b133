"""A pre-commit hook's run judges the commit: which findings of a referrer outside it are the commit's.

A staged config or script is re-checked through the tracked workloads that reference it. Such a
workload's finding belongs to the commit when its message names a file of the commit (``outputs
written to '/tmp/out' (from output_dir in configs/train.yaml:4)``: the committed value is at
fault); its own findings (a tag, a missing TTL) were there before and wait for ``check .``.
"""

from __future__ import annotations

from typing import Protocol
from typing import Sequence

from spikelint.model import Finding

NAME_CHARACTERS = "/_-"  # a path goes on through these (and through letters, digits and ".x")


class Checked(Protocol):
    """One file's results, as the engine keeps them."""

    dependent: bool  # not given: checked because it references a given file
    findings: list[Finding]


def keep_commit_findings(results: Sequence[Checked], given: Sequence[str]) -> int:
    """Leave in each referrer (``dependent``) only the commit's findings; returns how many were left out."""
    left = 0
    for result in results:
        if result.dependent:
            kept = from_the_commit(result.findings, given)
            left, result.findings = left + len(result.findings) - len(kept), kept
    return left


def from_the_commit(findings: Sequence[Finding], given: Sequence[str]) -> list[Finding]:
    """The findings whose message names one of ``given`` (the commit's files)."""
    return [finding for finding in findings if names_any(finding.message, given)]


def names_any(message: str, paths: Sequence[str]) -> bool:
    """Whether ``message`` names one of ``paths`` as a whole path (``a/train.yaml``, not ``a/train.yaml.bak``)."""
    for path in paths:
        start = message.find(path)
        while start >= 0:
            end = start + len(path)
            before = message[start - 1] if start else " "
            after = message[end:end + 2]
            goes_on = after[:1].isalnum() or after[:1] in NAME_CHARACTERS or \
                (after[:1] == "." and after[1:2].isalnum())
            if not (before.isalnum() or before in NAME_CHARACTERS + ".") and not goes_on:
                return True
            start = message.find(path, start + 1)
    return False
