from __future__ import annotations

import re

from spikelint.pipeline.fingerprint import assign_fingerprints
from spikelint.pipeline.fingerprint import fingerprint


def test_shape():
    assert re.fullmatch(r"[0-9a-f]{32}", fingerprint("SPK101", "a.yaml", "pytorch:latest", 0))


def test_stable_when_lines_move():
    # Version 1 and version 2 of a file: v2 inserts lines above, the findings move down.
    v1 = [("SPK101", "job.yaml", "image: a:latest"), ("SPK202", "job.yaml", "sha256:1")]
    v2 = [("SPK999", "job.yaml", "new finding above")] + v1
    assert assign_fingerprints(v1) == assign_fingerprints(v2)[1:]


def test_whitespace_normalised():
    assert fingerprint("SPK501", "run.sh", "python  train.py |\n  tee log", 0) == fingerprint("SPK501", "run.sh", " python train.py | tee log ", 0)


def test_repeats_unique_and_first_unchanged():
    items = [("SPK303", "a.yaml", "emptyDir ckpt")] * 3 + [("SPK303", "a.yaml", "emptyDir  ckpt")]
    prints = assign_fingerprints(items)
    assert len(set(prints)) == 4
    assert prints[0] == fingerprint("SPK303", "a.yaml", "emptyDir ckpt", 0)
    assert prints[3] == fingerprint("SPK303", "a.yaml", "emptyDir ckpt", 3)


def test_occurrences_counted_per_file_and_rule():
    prints = assign_fingerprints([("SPK101", "a.yaml", "x"), ("SPK101", "b.yaml", "x"), ("SPK102", "a.yaml", "x")])
    assert prints == [fingerprint("SPK101", "a.yaml", "x", 0), fingerprint("SPK101", "b.yaml", "x", 0), fingerprint("SPK102", "a.yaml", "x", 0)]


def test_every_component_matters():
    base = fingerprint("SPK101", "a.yaml", "x", 0)
    assert len({base, fingerprint("SPK102", "a.yaml", "x", 0), fingerprint("SPK101", "b.yaml", "x", 0),
                fingerprint("SPK101", "a.yaml", "y", 0), fingerprint("SPK101", "a.yaml", "x", 1)}) == 5
    # Field separators cannot be faked by moving text between fields.
    assert fingerprint("SPK101", "ab", "c", 0) != fingerprint("SPK101", "a", "bc", 0)


def test_known_value():
    # Pinned: changing the recipe silently invalidates every user's baseline.
    assert fingerprint("SPK101", "a.yaml", "pytorch:latest", 0) == fingerprint("SPK101", "a.yaml", "pytorch:latest")
    import hashlib

    expected = hashlib.sha256("SPK101\0a.yaml\0pytorch:latest\0" "0".encode()).hexdigest()[:32]
    assert fingerprint("SPK101", "a.yaml", "pytorch:latest", 0) == expected


# --------------------------------------------------------------------------- one fingerprint per secret

SECRET = "sha256:" + "5e" * 32  # what secret checks pass: the hash of the secret


def test_a_secret_has_one_fingerprint_whichever_rule_reports_it():
    prints = {fingerprint(rule, "job.yaml", SECRET) for rule in ("SPK201", "SPK202", "SPK203", "SPK204", "SPK205", "SPK206")}
    assert prints == {fingerprint("SPK201", "job.yaml", SECRET)}  # what history and SPK201 always gave
    assert fingerprint("SPK202", "other.yaml", SECRET) not in prints  # the path still counts
    assert fingerprint("SPK202", "job.yaml", "sha256:" + "5f" * 32) not in prints  # and the secret


def test_only_secret_keys_of_secret_rules_share_it():
    assert fingerprint("SPK207", "nb.ipynb", "outputs:nb.ipynb") != fingerprint("SPK201", "nb.ipynb", "outputs:nb.ipynb")
    assert fingerprint("SPK105", "train.py", SECRET) != fingerprint("SPK201", "train.py", SECRET)


def test_a_secret_repeated_in_a_file_under_two_rules_stays_unique():
    prints = assign_fingerprints([("SPK202", "job.yaml", SECRET), ("SPK203", "job.yaml", SECRET)])
    assert prints == [fingerprint("SPK201", "job.yaml", SECRET, 0), fingerprint("SPK201", "job.yaml", SECRET, 1)]


def test_aliases_are_what_older_baselines_hold():
    from spikelint.pipeline.fingerprint import next_fingerprint

    occurrences: dict[tuple[str, str, str], int] = {}
    first = next_fingerprint(occurrences, "SPK202", "job.yaml", SECRET)
    second = next_fingerprint(occurrences, "SPK201", "job.yaml", SECRET)
    assert first == (fingerprint("SPK201", "job.yaml", SECRET, 0), (_old("SPK202", "job.yaml", SECRET, 0),))
    # the second occurrence: SPK201's own first before (counted per rule then), which is also the secret's first
    assert second[1] == (fingerprint("SPK201", "job.yaml", SECRET, 0),)
    moved = next_fingerprint({}, "SPK501", "run.sh", "pipefail:python | tee", legacy_key="pipefail:python a.py | tee x")
    assert moved == (fingerprint("SPK501", "run.sh", "pipefail:python | tee"),
                     (_old("SPK501", "run.sh", "pipefail:python a.py | tee x", 0),))
    assert next_fingerprint({}, "SPK101", "a.yaml", "busybox:latest") == (fingerprint("SPK101", "a.yaml", "busybox:latest"), ())


def _old(rule: str, path: str, key: str, occurrence: int) -> str:
    import hashlib

    return hashlib.sha256("\0".join((rule, path, " ".join(key.split()), str(occurrence))).encode()).hexdigest()[:32]
